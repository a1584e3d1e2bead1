import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LuaScript,
  RedisFactStore,
  RedisIdempotencyStore,
  RedisRateLimiter,
  luaScript,
} from '../../../libs/adapters/redis/index.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { uniqueName } from '../../helpers/names.js';
import { dropTestRedis } from '../executor/test-parts.js';
import { expectLeaseFromServerClock } from './lease-clock.js';

const RETENTION_MS = 60_000;

async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('Redis stores: what the contract suite cannot see', () => {
  let t: TestRedis;
  let store: RedisIdempotencyStore;
  let limiter: RedisRateLimiter;

  beforeAll(() => {
    t = createTestRedis('redis_stores');
    store = new RedisIdempotencyStore(t.redis, { keyPrefix: t.prefix, abandonedRetentionMs: RETENTION_MS });
    limiter = new RedisRateLimiter(t.redis, { keyPrefix: t.prefix });
  });
  afterAll(() => dropTestRedis(t));

  it('takes lease times from the Redis server clock', async () => {
    await expectLeaseFromServerClock(store, () => redisNowMs(t.redis));
  });

  it('writes only under its key prefix, and every key it writes expires', async () => {
    const k = uniqueName('k');
    const b = uniqueName('b');
    // TTLs only shrink while the test runs: bound them by the time elapsed since each write, measured
    // here, rather than by a fixed slack that a loaded machine can exceed.
    const sinceMs = (t0: number) => performance.now() - t0 + 1;
    const claimedAt = performance.now();
    await store.claim(k, 'fp', 'a', 10_000);
    const takenAt = performance.now();
    await limiter.take(b, { capacity: 5, refillPerSecond: 0.001 });
    expect((await t.redis.keys(`*${k}*`)).concat(await t.redis.keys(`*${b}*`)).sort()).toEqual(
      [store.recordKey(k), limiter.bucketRedisKey(b)].sort(),
    );
    expect(store.recordKey(k).startsWith(t.prefix)).toBe(true);
    expect(limiter.bucketRedisKey(b).startsWith(t.prefix)).toBe(true);

    // In flight: lease + abandoned retention.
    const inFlightTtl = await t.redis.pttl(store.recordKey(k));
    expect(inFlightTtl).toBeGreaterThanOrEqual(10_000 + RETENTION_MS - sinceMs(claimedAt));
    expect(inFlightTtl).toBeLessThanOrEqual(10_000 + RETENTION_MS);
    // Completed: exactly the caller's TTL from now on.
    const completedAt = performance.now();
    await store.complete(k, 'a', { outcome: 'SUCCESS', result: 1, completedAtMs: 0 }, 5_000);
    const completedTtl = await t.redis.pttl(store.recordKey(k));
    expect(completedTtl).toBeGreaterThanOrEqual(5_000 - sinceMs(completedAt));
    expect(completedTtl).toBeLessThanOrEqual(5_000);
    // A bucket with 4 of 5 tokens at 0.001/s is full again in 1,000 s; its key outlives that by 1 s of
    // slack. (Slow, so the key cannot expire before the test has looked for it.)
    const bucketTtl = await t.redis.pttl(limiter.bucketRedisKey(b));
    expect(bucketTtl).toBeGreaterThanOrEqual(1_001_000 - sinceMs(takenAt));
    expect(bucketTtl).toBeLessThanOrEqual(1_001_000);
  });

  it('deletes the record on release', async () => {
    const k = uniqueName('k');
    await store.claim(k, 'fp', 'a', 10_000);
    expect(await store.release(k, 'a')).toBe(true);
    expect(await t.redis.exists(store.recordKey(k))).toBe(0);
  });

  it('runs a script Redis has never seen (NOSCRIPT) by sending it, and caches it for next time', async () => {
    // A unique comment gives a SHA1 no Redis has cached, as after a restart or SCRIPT FLUSH.
    const script = new LuaScript('probe', `-- ${randomUUID()}\nreturn redis.call('INCR', KEYS[1])`);
    expect(await t.redis.script('EXISTS', script.sha1)).toEqual([0]);
    const key = `${t.prefix}probe`;
    expect(await script.run(t.redis, [key], [])).toBe(1);
    expect(await t.redis.script('EXISTS', script.sha1)).toEqual([1]);
    expect(await script.run(t.redis, [key], [])).toBe(2);
  });

  it('passes script errors through instead of retrying them', async () => {
    const script = new LuaScript('broken', `return redis.call('NO_SUCH_COMMAND')`);
    await expect(script.run(t.redis, [`${t.prefix}x`], [])).rejects.toThrow(
      /Unknown Redis command|unknown command/i,
    );
  });

  it('runs a batch of one script as one pipeline, in order, sending it once Redis lacks it', async () => {
    const script = new LuaScript(
      'probe-batch',
      `-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`,
    );
    const [a, b] = [`${t.prefix}batch-a`, `${t.prefix}batch-b`];
    const calls = [
      { keys: [a], args: [1] },
      { keys: [b], args: [10] },
      { keys: [a], args: [100] },
    ];
    expect(await script.runAll(t.redis, calls)).toEqual([1, 10, 101]);
    expect(await t.redis.script('EXISTS', script.sha1)).toEqual([1]);
    expect(await script.runAll(t.redis, calls)).toEqual([102, 20, 202]);
    expect(await script.runAll(t.redis, [])).toEqual([]);
  });

  it('passes a script error in a batch through', async () => {
    const script = new LuaScript('broken-batch', `return redis.call('NO_SUCH_COMMAND')`);
    const calls = [1, 2].map((i) => ({ keys: [`${t.prefix}x${i}`], args: [] }));
    await expect(script.runAll(t.redis, calls)).rejects.toThrow(/Unknown Redis command|unknown command/i);
  });

  it('ships each script under the SHA1 it is run by', async () => {
    const claim = luaScript('idempotency-claim.lua');
    expect(await t.redis.script('LOAD', claim.source)).toBe(claim.sha1);
  });
});

describe('Redis stores when Redis is unreachable', () => {
  let dead: Redis;
  beforeAll(() => {
    // Port 1 on loopback: nothing listens there; no retries, no offline queue, so calls fail fast.
    dead = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
  });
  afterAll(() => {
    dead.disconnect();
  });

  it('throws from claim, complete, release and take (callers fail closed)', async () => {
    const store = new RedisIdempotencyStore(dead, { keyPrefix: 'unreachable:' });
    const limiter = new RedisRateLimiter(dead, { keyPrefix: 'unreachable:' });
    await expect(store.claim('k', 'fp', 'a', 1000)).rejects.toThrow();
    await expect(
      store.complete('k', 'a', { outcome: 'SUCCESS', result: 1, completedAtMs: 0 }, 1000),
    ).rejects.toThrow();
    await expect(store.release('k', 'a')).rejects.toThrow();
    await expect(limiter.take('b', { capacity: 1, refillPerSecond: 1 })).rejects.toThrow();
  });

  it('throws from fact sums and records (callers decide)', async () => {
    const facts = new RedisFactStore(dead, { keyPrefix: 'unreachable:' });
    const series = { key: 'f', windowMs: 1000 };
    await expect(facts.sum([series, { ...series, key: 'g' }], 0)).rejects.toThrow();
    await expect(facts.record([{ ...series, callId: 'c', units: 1, atMs: 0 }])).rejects.toThrow();
  });
});
