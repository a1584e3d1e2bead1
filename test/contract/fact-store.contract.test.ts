import { describe, expect, it } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import { MemoryFactStore } from '../../libs/adapters/memory/index.js';
import { RedisFactStore } from '../../libs/adapters/redis/index.js';
import type { FactContribution, FactStore } from '../../libs/ports/fact-store.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { memoryHarness, redisClusterHarness, redisHarness, type Harness } from './store-harnesses.js';

/** A Redis-backed harness, plus the subject's connection and its store's keys, to inspect them. */
interface RedisFactHarness extends Harness<FactStore> {
  readonly redis: Redis | Cluster;
  readonly seriesRedisKeys: (seriesKey: string) => [at: string, units: string];
}

async function onRedis(
  open: (make: (redis: Redis | Cluster, prefix: string) => FactStore) => Promise<Harness<FactStore>>,
): Promise<RedisFactHarness> {
  let subject: { redis: Redis | Cluster; store: RedisFactStore } | undefined;
  const harness = await open((redis, keyPrefix) => {
    const store = new RedisFactStore(redis, { keyPrefix });
    subject ??= { redis, store };
    return store;
  });
  const { redis, store } = subject!;
  return { ...harness, redis, seriesRedisKeys: (seriesKey) => store.seriesRedisKeys(seriesKey) };
}

const redisAdapters = [
  { name: 'redis', create: () => onRedis((make) => redisHarness(make, 'fact')) },
  { name: 'redis-cluster', create: () => onRedis((make) => redisClusterHarness(make, 'fact')) },
];

const adapters: { name: string; create(): Promise<Harness<FactStore>> }[] = [
  { name: 'memory', create: () => Promise.resolve(memoryHarness(() => new MemoryFactStore())) },
  ...redisAdapters,
];

/** Times are the caller's (the pipeline clock): any fixed instant works on every adapter. */
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

const series = (): string => uniqueName('fact');

/** A contribution of `units` by call `callId` to `key`, at T0 + `afterMs`, in a one-hour window. */
const at = (key: string, callId: string, units: number, afterMs = 0): FactContribution => ({
  key,
  callId,
  units,
  atMs: T0 + afterMs,
  windowMs: HOUR,
});

describe.each(adapters)('FactStore contract: $name', (adapter) => {
  let h: Harness<FactStore>;
  let store: FactStore;
  openForSuite(async () => {
    h = await adapter.create();
    store = h.subject;
    return h;
  });

  const sumOf = async (key: string, nowMs = T0, windowMs = HOUR): Promise<number> => {
    const [total] = await store.sum([{ key, windowMs }], nowMs);
    return total!;
  };

  it('sums a series never recorded as 0, and answers no queries with no sums', async () => {
    expect(await sumOf(series())).toBe(0);
    expect(await store.sum([], T0)).toEqual([]);
    await store.record([]);
  });

  it('adds the contributions of different calls, exactly in units', async () => {
    const key = series();
    await store.record(Array.from({ length: 10 }, (_, i) => at(key, `call-${i}`, 499_900, i)));
    expect(await sumOf(key, T0 + 10)).toBe(4_999_000);
    await store.record([at(key, 'call-10', 1)]);
    expect(await sumOf(key, T0 + 10)).toBe(4_999_001);
  });

  it('counts only contributions within the window: one exactly windowMs old is out', async () => {
    const key = series();
    await store.record([at(key, 'early', 5), at(key, 'later', 7, 1_000)]);
    expect(await sumOf(key, T0)).toBe(12);
    expect(await sumOf(key, T0 + HOUR - 1)).toBe(12);
    expect(await sumOf(key, T0 + HOUR)).toBe(7);
    expect(await sumOf(key, T0 + HOUR + 999)).toBe(7);
    expect(await sumOf(key, T0 + HOUR + 1_000)).toBe(0);
    // The window is the query's: a shorter one sees less of the same series.
    expect(await sumOf(key, T0 + 1_000, 1_000)).toBe(7);
    expect(await sumOf(key, T0 + 1_000, 1_001)).toBe(12);
  });

  it('leaves out the contribution of exceptCallId, only while it is in the window', async () => {
    const key = series();
    await store.record([at(key, 'judged', 30), at(key, 'other', 12, 1_000)]);
    const sum = async (exceptCallId: string, nowMs: number) =>
      (await store.sum([{ key, windowMs: HOUR, exceptCallId }], nowMs))[0];
    expect(await sum('judged', T0 + 1_000)).toBe(12);
    expect(await sum('never-recorded', T0 + 1_000)).toBe(42);
    // Once out of the window it counted nowhere, so leaving it out changes nothing.
    expect(await sum('judged', T0 + HOUR)).toBe(12);
    expect(await sum('other', T0 + HOUR)).toBe(0);
    // Per query: the same series read twice in one request, with and without the exception.
    expect(
      await store.sum(
        [
          { key, windowMs: HOUR },
          { key, windowMs: HOUR, exceptCallId: 'other' },
        ],
        T0 + 1_000,
      ),
    ).toEqual([42, 30]);
  });

  it('holds one contribution per call: recording a call again changes nothing', async () => {
    const key = series();
    await store.record([at(key, 'call-1', 100)]);
    await store.record([at(key, 'call-1', 100)]);
    await h.peer.record([at(key, 'call-1', 100)]);
    // Even with other units or another time: the first recording stands.
    await store.record([at(key, 'call-1', 900, 10)]);
    // Twice in one batch.
    await store.record([at(key, 'call-2', 1), at(key, 'call-2', 1)]);
    expect(await sumOf(key, T0 + 10)).toBe(101);
    // The same call id in another series is another contribution.
    const other = series();
    await store.record([at(other, 'call-1', 3)]);
    expect(await sumOf(other)).toBe(3);
    expect(await sumOf(key, T0 + 10)).toBe(101);
  });

  it('of 50 concurrent records of one call on two clients, one counts', async () => {
    const key = series();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? store : h.peer).record([at(key, 'once', 250)])),
    );
    expect(await sumOf(key)).toBe(250);
  });

  it('counts all of 200 concurrent records of distinct calls on two clients', async () => {
    const key = series();
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 === 0 ? store : h.peer).record([at(key, `call-${i}`, i + 1)]),
      ),
    );
    expect(await sumOf(key)).toBe((200 * 201) / 2);
    expect(await h.peer.sum([{ key, windowMs: HOUR }], T0)).toEqual([20_100]);
  });

  it('adds zero and negative units', async () => {
    const key = series();
    await store.record([at(key, 'a', 700), at(key, 'b', -200), at(key, 'c', 0)]);
    expect(await sumOf(key)).toBe(500);
    const negative = series();
    await store.record([at(negative, 'a', -3), at(negative, 'b', 0)]);
    expect(await sumOf(negative)).toBe(-3);
    const zero = series();
    await store.record([at(zero, 'a', 0)]);
    expect(await sumOf(zero)).toBe(0);
    const large = series();
    await store.record([at(large, 'a', Number.MAX_SAFE_INTEGER - 1), at(large, 'b', 1)]);
    expect(await sumOf(large)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('answers many queries in one call in their order, from one batch of records', async () => {
    const keys = Array.from({ length: 20 }, () => series());
    // Series i gets i + 1 contributions of i units each.
    await store.record(
      keys.flatMap((key, i) => Array.from({ length: i + 1 }, (_, c) => at(key, `c${c}`, i))),
    );
    const queries = [...keys, series()].map((key) => ({ key, windowMs: HOUR }));
    expect(await store.sum(queries, T0)).toEqual([...keys.map((_, i) => i * (i + 1)), 0]);
    // One series twice with different windows: each query is answered on its own.
    const last = keys.at(-1)!;
    await store.record([at(last, 'late', 1_000, 60_000)]);
    expect(
      await store.sum(
        [
          { key: last, windowMs: 1_000 },
          { key: last, windowMs: HOUR },
        ],
        T0 + 60_000,
      ),
    ).toEqual([1_000, 1_380]);
  });

  it('never trims on sum: a later window sees nothing, an earlier one still sees the contribution', async () => {
    const key = series();
    await store.record([at(key, 'old', 42)]);
    expect(await sumOf(key, T0 + 5 * HOUR)).toBe(0);
    expect(await sumOf(key, T0 + 5 * HOUR)).toBe(0);
    expect(await sumOf(key, T0)).toBe(42);
    expect(await h.peer.sum([{ key, windowMs: HOUR }], T0 + 1)).toEqual([42]);
  });

  it('keeps contributions still within the window of a later record', async () => {
    const key = series();
    await store.record([at(key, 'a', 1), at(key, 'b', 2, HOUR / 2)]);
    await store.record([at(key, 'c', 4, HOUR)]);
    // `a` is exactly one window older than `c` and may be gone; `b` and `c` must be counted.
    expect(await sumOf(key, T0 + HOUR)).toBe(6);
    expect(await sumOf(key, T0 + HOUR + HOUR / 2)).toBe(4);
  });

  it('takes any non-empty series key and call id as opaque text', async () => {
    const prefix = series();
    const keys = ['}', '{}', `}${prefix}{`, `${prefix}:{t1}:order:O-5512`, `${prefix} ünï ✓`];
    await store.record(keys.map((key, i) => at(key, `{}:${prefix}`, i + 1)));
    await store.record(keys.map((key, i) => at(key, `{}:${prefix}`, 100 + i)));
    expect(
      await store.sum(
        keys.map((key) => ({ key, windowMs: HOUR })),
        T0,
      ),
    ).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses invalid arguments with a RangeError, writing nothing of the batch', async () => {
    const key = series();
    const bad: FactContribution[] = [
      at('', 'call', 1),
      at(key, '', 1),
      at(key, 'call', 1.5),
      at(key, 'call', Number.NaN),
      at(key, 'call', Number.MAX_SAFE_INTEGER + 1),
      at(key, 'call', Number.POSITIVE_INFINITY),
      { ...at(key, 'call', 1), atMs: Number.NaN },
      { ...at(key, 'call', 1), atMs: Number.POSITIVE_INFINITY },
      { ...at(key, 'call', 1), windowMs: 0 },
      { ...at(key, 'call', 1), windowMs: -HOUR },
      { ...at(key, 'call', 1), windowMs: Number.POSITIVE_INFINITY },
      { ...at(key, 'call', 1), windowMs: Number.NaN },
    ];
    for (const contribution of bad) {
      await expect(store.record([at(key, 'valid', 5), contribution])).rejects.toThrow(RangeError);
    }
    expect(await sumOf(key)).toBe(0);

    await expect(store.sum([{ key: '', windowMs: HOUR }], T0)).rejects.toThrow(RangeError);
    for (const windowMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.sum([{ key, windowMs }], T0)).rejects.toThrow(RangeError);
    }
    for (const nowMs of [Number.NaN, Number.NEGATIVE_INFINITY]) {
      await expect(store.sum([{ key, windowMs: HOUR }], nowMs)).rejects.toThrow(RangeError);
    }
  });
});

describe.each(redisAdapters)('RedisFactStore: $name', (adapter) => {
  let h: RedisFactHarness;
  openForSuite(async () => (h = await adapter.create()));

  const ttls = (key: string): Promise<number[]> =>
    Promise.all(h.seriesRedisKeys(key).map((redisKey) => h.redis.pttl(redisKey)));
  /** How many call ids each of the series' two keys holds. */
  const sizes = async (key: string): Promise<number[]> => {
    const [at, units] = h.seriesRedisKeys(key);
    return [await h.redis.zcard(at), await h.redis.hlen(units)];
  };

  it('gives a recorded series an expiry of its window plus a margin, and a sum moves none', async () => {
    const key = series();
    await h.subject.record([{ ...at(key, 'a', 1), windowMs: 10 * 60_000 }]);
    const first = await ttls(key);
    expect(first).toHaveLength(2);
    for (const ttl of first) {
      expect(ttl).toBeGreaterThan(10 * 60_000);
      expect(ttl).toBeLessThanOrEqual(10 * 60_000 + 60_000);
    }
    // A longer window extends it; a shorter one never shortens it.
    await h.subject.record([at(key, 'b', 1)]);
    await h.subject.record([{ ...at(key, 'c', 1), windowMs: 1_000 }]);
    for (const ttl of await ttls(key)) expect(ttl).toBeGreaterThan(HOUR);
    // A series only summed has no keys at all.
    const unrecorded = series();
    expect(await h.subject.sum([{ key: unrecorded, windowMs: HOUR }], T0)).toEqual([0]);
    expect(await ttls(unrecorded)).toEqual([-2, -2]);
  });

  it('drops what fell out of the window from both keys on record, and nothing on sum', async () => {
    const key = series();
    await h.subject.record([at(key, 'a', 1), at(key, 'b', 2, 1_000)]);
    expect(await h.subject.sum([{ key, windowMs: HOUR }], T0 + 10 * HOUR)).toEqual([0]);
    expect(await sizes(key)).toEqual([2, 2]);
    await h.subject.record([at(key, 'c', 4, HOUR + 500)]);
    expect(await sizes(key)).toEqual([2, 2]);
    expect(await h.subject.sum([{ key, windowMs: HOUR }], T0 + HOUR + 500)).toEqual([6]);
  });

  it('sums and drops a series of thousands of contributions (the scripts work in slices)', async () => {
    const key = series();
    const count = 2_500;
    await h.subject.record(Array.from({ length: count }, (_, i) => at(key, `call-${i}`, i + 1, i)));
    expect(await sizes(key)).toEqual([count, count]);
    expect(await h.subject.sum([{ key, windowMs: HOUR }], T0 + count)).toEqual([(count * (count + 1)) / 2]);
    // Only the last contribution is within the window of this one.
    await h.subject.record([at(key, 'late', 7, HOUR + count - 2)]);
    expect(await sizes(key)).toEqual([2, 2]);
    expect(await h.subject.sum([{ key, windowMs: HOUR }], T0 + HOUR + count - 2)).toEqual([count + 7]);
  });

  it('refuses a key prefix holding an empty hash tag', () => {
    expect(() => new RedisFactStore(h.redis, { keyPrefix: 'app{}:' })).toThrow(RangeError);
  });
});
