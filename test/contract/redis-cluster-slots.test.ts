import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RedisFactStore,
  RedisIdempotencyStore,
  RedisIdempotencyTombstones,
  RedisRateLimiter,
  RedisSingleUseStore,
} from '../../libs/adapters/redis/index.js';
import { createTestRedisCluster, type TestRedisCluster } from '../helpers/redis.js';

const KEYS_PER_STORE = 40;
/**
 * Every key written here lives far longer than the test runs, so the count at the end is every key
 * written, however slow the writing was. (A bucket's key lives until the bucket is full again.)
 */
const HOUR_MS = 3_600_000;
const NEVER_REFILLS = { capacity: 5, refillPerSecond: 1e-6 };

/** Which master serves each slot, from CLUSTER SLOTS (ranges with their master first). */
async function slotOwners(cluster: TestRedisCluster): Promise<(slot: number) => string | undefined> {
  const ranges = await cluster.redis.cluster('SLOTS');
  return (slot) => {
    const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to) ?? [];
    return master === undefined ? undefined : `${master[0]}:${master[1]}`;
  };
}

/**
 * The contract suites run every Redis store on the cluster; this proves they really were spread:
 * each store's keys land on every master, each on the master that owns its slot, and no script
 * needed two keys in one slot (a script over two keys of different slots fails with CROSSSLOT).
 */
describe('Redis stores on a Redis Cluster', () => {
  let cluster: TestRedisCluster;

  beforeAll(() => {
    cluster = createTestRedisCluster('slots');
  });
  afterAll(async () => {
    await cluster.clear();
    await cluster.close();
  });

  it('spreads every store’s keys over all three masters, each key on its slot’s master', async () => {
    const { redis, prefix } = cluster;
    const idempotency = new RedisIdempotencyStore(redis, { keyPrefix: `${prefix}idem:` });
    const tombstones = new RedisIdempotencyTombstones(redis, { keyPrefix: `${prefix}tomb:` });
    const limiter = new RedisRateLimiter(redis, { keyPrefix: `${prefix}rate:` });
    const singleUse = new RedisSingleUseStore(redis, { keyPrefix: `${prefix}once:` });
    const facts = new RedisFactStore(redis, { keyPrefix: `${prefix}fact:` });
    for (let i = 0; i < KEYS_PER_STORE; i += 1) {
      const claim = await idempotency.claim(`call-${i}`, 'fp', 'owner', HOUR_MS);
      expect(claim.kind).toBe('claimed');
      expect(await tombstones.mark(`call-${i}`, HOUR_MS)).toBe(false);
      expect(await tombstones.mark(`call-${i}`, HOUR_MS)).toBe(true);
      expect((await limiter.take(`bucket-${i}`, NEVER_REFILLS)).allowed).toBe(true);
      expect(await singleUse.consume(`jti-${i}`, HOUR_MS)).toBe('consumed');
    }
    // One batch over every series: its scripts go to the masters of their series' slots.
    const atMs = Date.now();
    const series = Array.from({ length: KEYS_PER_STORE }, (_, i) => `series-${i}`);
    await facts.record(series.map((key) => ({ key, callId: 'call', units: 1, atMs, windowMs: HOUR_MS })));
    expect(
      await facts.sum(
        series.map((key) => ({ key, windowMs: HOUR_MS })),
        atMs,
      ),
    ).toEqual(series.map(() => 1));
    // A series is two keys (its contributions and their units), always in one slot.
    for (const key of series) {
      const [at, units] = facts.seriesRedisKeys(key);
      expect(await redis.cluster('KEYSLOT', at)).toBe(await redis.cluster('KEYSLOT', units));
    }

    const byMaster = await cluster.keysByMaster();
    expect(byMaster.size).toBe(3);
    const owner = await slotOwners(cluster);
    const keysPerStore: Record<string, number> = {
      'idem:': KEYS_PER_STORE,
      'tomb:': KEYS_PER_STORE,
      'rate:': KEYS_PER_STORE,
      'once:': KEYS_PER_STORE,
      'fact:': 2 * KEYS_PER_STORE,
    };
    for (const [store, count] of Object.entries(keysPerStore)) {
      const perMaster = [...byMaster.values()].map(
        (keys) => keys.filter((key) => key.startsWith(`${prefix}${store}`)).length,
      );
      expect(
        perMaster.every((count) => count > 0),
        `${store} keys per master: ${perMaster.join(', ')}`,
      ).toBe(true);
      expect(perMaster.reduce((a, b) => a + b, 0)).toBe(count);
    }
    for (const [master, keys] of byMaster) {
      for (const key of keys) {
        const slot = Number(await redis.cluster('KEYSLOT', key));
        expect(owner(slot), key).toBe(master);
      }
    }
  });
});
