import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySingleUseStore } from '../../libs/adapters/memory/single-use-store.js';
import { PostgresSingleUseStore } from '../../libs/adapters/postgres/single-use-store.js';
import { RedisSingleUseStore } from '../../libs/adapters/redis/single-use-store.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { timed, untilForgotten, withGrowingPeriod } from './store-time.js';
import {
  memoryHarness,
  postgresHarness,
  redisClusterHarness,
  redisHarness,
  type Harness,
} from './store-harnesses.js';

/** The store's harness, and how far apart the store's clock and `now()` may be (0 for the manual clock). */
type SingleUseHarness = Harness<SingleUseStore> & { readonly skewMs: number };

/** A server-backed harness: its clock is this machine's, which may be up to a second off the server's. */
const onServer = async (harness: Promise<Harness<SingleUseStore>>): Promise<SingleUseHarness> => ({
  ...(await harness),
  skewMs: 1_000,
});
const onRedis = (redis: ConstructorParameters<typeof RedisSingleUseStore>[0], keyPrefix: string) =>
  new RedisSingleUseStore(redis, { keyPrefix });

const adapters: { name: string; create(): Promise<SingleUseHarness> }[] = [
  {
    name: 'memory',
    create: () =>
      Promise.resolve({ ...memoryHarness((clock) => new MemorySingleUseStore(clock)), skewMs: 0 }),
  },
  { name: 'redis', create: () => onServer(redisHarness(onRedis, 'single_use')) },
  { name: 'redis-cluster', create: () => onServer(redisClusterHarness(onRedis, 'single_use')) },
  {
    name: 'postgres',
    create: () => onServer(postgresHarness((pool) => new PostgresSingleUseStore(pool), 'single_use')),
  },
];

const HOUR = 3_600_000;
const fresh = (): string => `jti-${randomUUID()}`;

describe.each(adapters)('SingleUseStore contract: $name', (adapter) => {
  let h: SingleUseHarness;
  openForSuite(async () => (h = await adapter.create()));

  it('a fresh id is consumed once; every later consume is already-used', async () => {
    const id = fresh();
    expect(await h.subject.consume(id, HOUR)).toBe('consumed');
    expect(await h.subject.consume(id, HOUR)).toBe('already-used');
    expect(await h.peer.consume(id, HOUR)).toBe('already-used');
  });

  it('of 20 concurrent consumers on two clients, exactly one gets consumed', async () => {
    const id = fresh();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.subject : h.peer).consume(id, HOUR, `call-${i}`)),
    );
    expect(answers.filter((a) => a === 'consumed')).toHaveLength(1);
    expect(answers.filter((a) => a === 'already-used')).toHaveLength(19);
  });

  it('ids are independent of each other', async () => {
    const [a, b] = [fresh(), fresh()];
    expect(await h.subject.consume(a, HOUR)).toBe('consumed');
    expect(await h.subject.consume(b, HOUR)).toBe('consumed');
  });

  it('the same holder may consume again (a retry of one call); another holder or none may not', async () => {
    const id = fresh();
    expect(await h.subject.consume(id, HOUR, 'idem-1')).toBe('consumed');
    expect(await h.peer.consume(id, HOUR, 'idem-1')).toBe('consumed');
    expect(await h.subject.consume(id, HOUR, 'idem-2')).toBe('already-used');
    expect(await h.subject.consume(id, HOUR)).toBe('already-used');
  });

  it('an id consumed without a holder is not re-entered by an empty holder', async () => {
    const id = fresh();
    expect(await h.subject.consume(id, HOUR, '')).toBe('consumed');
    expect(await h.subject.consume(id, HOUR, '')).toBe('already-used');
  });

  it('an id is remembered for ttlMs and forgotten after it', async () => {
    await withGrowingPeriod(300, async (ttlMs) => {
      const id = fresh();
      const consumed = await timed(h, () => h.subject.consume(id, ttlMs));
      expect(consumed.value).toBe('consumed');
      // Each read is a consume: refused while the id is remembered, taken again (for an hour) once not.
      const { sawLive } = await untilForgotten(
        h,
        ttlMs,
        consumed,
        async () => (await h.subject.consume(id, HOUR)) === 'already-used',
      );
      expect(await h.subject.consume(id, HOUR)).toBe('already-used');
      return sawLive;
    });
  });

  it('refuses an empty id and a ttl that is not a positive duration', async () => {
    await expect(h.subject.consume('', HOUR)).rejects.toThrow(RangeError);
    await expect(h.subject.consume(fresh(), 0)).rejects.toThrow(RangeError);
    await expect(h.subject.consume(fresh(), Number.NaN)).rejects.toThrow(RangeError);
  });
});
