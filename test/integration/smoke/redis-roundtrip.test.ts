import { describe, expect, it } from 'vitest';
import type { TestRedis } from '../../helpers/redis.js';
import { createTestRedis } from '../../helpers/redis.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';

describe('redis: round trip', () => {
  let r: TestRedis;
  openForSuite(() => (r = createTestRedis('smoke_redis')));

  it('stores and reads strings, hashes and expiring keys under the test prefix', async () => {
    const key = `${r.prefix}greeting`;
    expect(await r.redis.set(key, 'hello', 'NX')).toBe('OK');
    expect(await r.redis.set(key, 'other', 'NX')).toBeNull();
    expect(await r.redis.get(key)).toBe('hello');

    const hash = `${r.prefix}call`;
    await r.redis.hset(hash, { state: 'in_flight', attempt: '1' });
    expect(await r.redis.hgetall(hash)).toEqual({ state: 'in_flight', attempt: '1' });

    const temp = `${r.prefix}marker`;
    await r.redis.set(temp, '1', 'PX', 60_000);
    const ttl = await r.redis.pttl(temp);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);

    expect((await r.redis.keys(`${r.prefix}*`)).sort()).toEqual([hash, key, temp].sort());
  });
});
