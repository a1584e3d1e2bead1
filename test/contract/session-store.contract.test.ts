import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../libs/adapters/memory/session-store.js';
import { RedisSessionStore } from '../../libs/adapters/redis/session-store.js';
import type { SessionStore } from '../../libs/ports/session-store.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { timed, untilForgotten, withGrowingPeriod } from './store-time.js';
import { memoryHarness, redisClusterHarness, redisHarness, type Harness } from './store-harnesses.js';

const onRedis = (redis: ConstructorParameters<typeof RedisSessionStore>[0], keyPrefix: string) =>
  new RedisSessionStore(redis, { keyPrefix });

const adapters: { name: string; create(): Promise<Harness<SessionStore>> }[] = [
  { name: 'memory', create: () => Promise.resolve(memoryHarness((clock) => new MemorySessionStore(clock))) },
  { name: 'redis', create: () => redisHarness(onRedis, 'session') },
  { name: 'redis-cluster', create: () => redisClusterHarness(onRedis, 'session') },
];

const HOUR = 3_600_000;
const fresh = (): string => randomBytes(32).toString('base64url');

describe.each(adapters)('SessionStore contract: $name', (adapter) => {
  let h: Harness<SessionStore>;
  openForSuite(async () => (h = await adapter.create()));

  it('reads back what was put, from every client; a put replaces the value', async () => {
    const id = fresh();
    expect(await h.subject.get(id)).toBeUndefined();
    await h.subject.put(id, '{"operator":"ann"}', HOUR);
    expect(await h.peer.get(id)).toBe('{"operator":"ann"}');
    await h.peer.put(id, '{"operator":"bob"}', HOUR);
    expect(await h.subject.get(id)).toBe('{"operator":"bob"}');
  });

  it('delete removes the value for every client and says whether there was one', async () => {
    const id = fresh();
    await h.subject.put(id, 'v', HOUR);
    expect(await h.peer.delete(id)).toBe(true);
    expect(await h.subject.get(id)).toBeUndefined();
    expect(await h.subject.delete(id)).toBe(false);
  });

  it('of 20 concurrent takers on two clients, exactly one gets the value', async () => {
    const id = fresh();
    await h.subject.put(id, 'pending', HOUR);
    const got = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.subject : h.peer).take(id)),
    );
    expect(got.filter((v) => v === 'pending')).toHaveLength(1);
    expect(got.filter((v) => v === undefined)).toHaveLength(19);
    expect(await h.subject.get(id)).toBeUndefined();
  });

  it('a value is kept for ttlMs and gone after it', async () => {
    await withGrowingPeriod(300, async (ttlMs) => {
      const id = fresh();
      const written = await timed(h, () => h.subject.put(id, 'v', ttlMs));
      const { sawLive } = await untilForgotten(h, ttlMs, written, async () => (await h.peer.get(id)) === 'v');
      return sawLive;
    });
  });

  it('refuses an empty id and a ttl that is not a positive number', async () => {
    await expect(h.subject.put('', 'v', HOUR)).rejects.toThrow(RangeError);
    await expect(h.subject.put(fresh(), 'v', 0)).rejects.toThrow(RangeError);
    await expect(h.subject.get('')).rejects.toThrow(RangeError);
  });
});
