import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisIdempotencyStore } from '../../libs/adapters/redis/index.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { StoredResult } from '../../libs/ports/idempotency-store.js';
import {
  createTestRedis,
  createTestRedisCluster,
  type TestRedis,
  type TestRedisCluster,
} from '../helpers/redis.js';
import { uniqueName } from '../helpers/names.js';
import { startPrivateRedis } from '../chaos/private-servers.js';

const stored: StoredResult = { outcome: 'SUCCESS', result: { ok: true }, completedAtMs: 1_700_000_000_000 };
const unavailable = (error: unknown): boolean =>
  error instanceof ToolgateError && error.code === 'DEPENDENCY_UNAVAILABLE';

/**
 * Two stores on `redis` under `keyPrefix`: `plain` waits for no replica, `waiting` for one, as long
 * as `acks` says (and rewrites a completion lost before a replica had it, for `rewriteForMs`).
 */
function plainAndWaiting(redis: Redis, keyPrefix: string, acks: { timeoutMs: number; rewriteForMs: number }) {
  return {
    plain: new RedisIdempotencyStore(redis, { keyPrefix }),
    waiting: new RedisIdempotencyStore(redis, { keyPrefix, replicaAcks: { replicas: 1, ...acks } }),
  };
}

/**
 * `replicaAcks`: the idempotency store waits for replicas (Redis WAIT) so a record survives its
 * master's failover. The test cluster gives every master one replica; the single test Redis has none.
 */
describe('RedisIdempotencyStore with replica acknowledgements', () => {
  let cluster: TestRedisCluster;
  let single: TestRedis;
  beforeAll(() => {
    cluster = createTestRedisCluster('replica_acks');
    single = createTestRedis('replica_acks');
  });
  afterAll(async () => {
    await cluster.clear();
    await cluster.close();
    await single.close();
  });

  it('claims, completes and answers on a cluster whose masters each have a replica, for keys on every master', async () => {
    const store = new RedisIdempotencyStore(cluster.redis, {
      keyPrefix: cluster.prefix,
      replicaAcks: { replicas: 1, timeoutMs: 2_000 },
    });
    for (let i = 0; i < 20; i += 1) {
      const key = uniqueName('call');
      expect((await store.claim(key, 'fp', 'owner', 30_000)).kind).toBe('claimed');
      expect(await store.complete(key, 'owner', stored, 60_000)).toBe(true);
      expect(await store.claim(key, 'fp', 'other', 30_000)).toEqual({ kind: 'completed', stored });
    }
    const perMaster = [...(await cluster.keysByMaster()).values()].map((keys) => keys.length);
    expect(perMaster.every((count) => count > 0)).toBe(true);
  });

  it('refuses a claim that fewer replicas acknowledge than asked: DEPENDENCY_UNAVAILABLE, never a silent claim', async () => {
    const onCluster = new RedisIdempotencyStore(cluster.redis, {
      keyPrefix: cluster.prefix,
      replicaAcks: { replicas: 2, timeoutMs: 100 },
    });
    await expect(onCluster.claim(uniqueName('call'), 'fp', 'owner', 30_000)).rejects.toSatisfy(unavailable);

    const onSingle = new RedisIdempotencyStore(single.redis, {
      keyPrefix: single.prefix,
      replicaAcks: { replicas: 1, timeoutMs: 50 },
    });
    const key = uniqueName('call');
    await expect(onSingle.claim(key, 'fp', 'owner', 30_000)).rejects.toSatisfy(unavailable);
    // The refused claim is given back: the call did not run, so its redelivery is a first run.
    expect((await onSingle.peek(key)).kind).toBe('absent');
  });

  it('reports a completion the replicas did not acknowledge as not written', async () => {
    const { plain, waiting } = plainAndWaiting(single.redis, single.prefix, {
      timeoutMs: 50,
      rewriteForMs: 300,
    });
    const key = uniqueName('call');
    expect((await plain.claim(key, 'fp', 'owner', 30_000)).kind).toBe('claimed');
    expect(await waiting.complete(key, 'owner', stored, 60_000)).toBe(false);
    // Written on the master all the same: only the acknowledgement is missing.
    expect(await plain.peek(key)).toMatchObject({ kind: 'completed', stored });
    await single.redis.del(plain.recordKey(key));
  });

  it('writes a completion lost with its master again, and reports it written once a replica has it', async () => {
    // A master of its own, at first without a replica, and a second server to become its replica.
    const master = await startPrivateRedis();
    const replica = await startPrivateRedis();
    const onMaster = new Redis(master.url);
    const onReplica = new Redis(replica.url);
    try {
      const { plain, waiting } = plainAndWaiting(onMaster, 'acks:', { timeoutMs: 100, rewriteForMs: 30_000 });
      const key = uniqueName('call');
      expect((await plain.claim(key, 'fp', 'owner', 60_000)).kind).toBe('claimed');
      const claimed = await onMaster.hgetall(plain.recordKey(key));
      const completing = waiting.complete(key, 'owner', stored, 60_000);
      // The completion is on the master, unacknowledged. As after a failover to a replica that had
      // only the claim, the record goes back to the claim...
      for (let i = 0; i < 100 && (await plain.peek(key)).kind !== 'completed'; i++) await sleep(20);
      expect((await plain.peek(key)).kind).toBe('completed');
      await onMaster.multi().del(plain.recordKey(key)).hset(plain.recordKey(key), claimed).exec();
      expect((await plain.peek(key)).kind).toBe('in-flight');
      // ...and a replica arrives: the completion is written again and acknowledged.
      await onReplica.replicaof('127.0.0.1', master.port);
      expect(await completing).toBe(true);
      expect(await plain.peek(key)).toMatchObject({ kind: 'completed', stored });
      expect(await onReplica.hget(plain.recordKey(key), 'state')).toBe('completed');
    } finally {
      onMaster.disconnect();
      onReplica.disconnect();
      await replica.destroy();
      await master.destroy();
    }
  });

  it('stops writing again once another owner holds the key', async () => {
    const master = await startPrivateRedis();
    const onMaster = new Redis(master.url);
    try {
      const { plain, waiting } = plainAndWaiting(onMaster, 'acks:', { timeoutMs: 50, rewriteForMs: 30_000 });
      const key = uniqueName('call');
      expect((await plain.claim(key, 'fp', 'owner', 60_000)).kind).toBe('claimed');
      const completing = waiting.complete(key, 'owner', stored, 60_000);
      for (let i = 0; i < 100 && (await plain.peek(key)).kind !== 'completed'; i++) await sleep(20);
      // The record is gone and another owner claimed the key (a take-over after a lost record).
      await onMaster.del(plain.recordKey(key));
      expect((await plain.claim(key, 'fp', 'other', 60_000)).kind).toBe('claimed');
      expect(await completing).toBe(false);
      expect(await plain.peek(key)).toMatchObject({ kind: 'in-flight', owner: 'other' });
    } finally {
      onMaster.disconnect();
      await master.destroy();
    }
  });
});
