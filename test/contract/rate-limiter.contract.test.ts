import { describe, expect, it } from 'vitest';
import type { BucketLimit, RateLimiter } from '../../libs/ports/rate-limiter.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { rateLimiterAdapters, type AdapterCase, type Harness } from './store-harnesses.js';

/** Refills so slowly that nothing measurable comes back during a test: the bucket is a fixed budget. */
const SLOW = 0.01;

function rateLimiterContract(adapter: AdapterCase<RateLimiter>): void {
  let h: Harness<RateLimiter>;
  let limiter: RateLimiter;
  const bucket = (): string => uniqueName('bucket');

  openForSuite(async () => {
    h = await adapter.create();
    limiter = h.subject;
    return h;
  });

  it('starts a fresh bucket full: the first take is allowed with capacity - 1 left', async () => {
    expect(await limiter.take(bucket(), { capacity: 5, refillPerSecond: SLOW })).toEqual({
      allowed: true,
      remaining: 4,
      retryAfterMs: 0,
    });
  });

  it('allows exactly capacity of 100 concurrent takes, each seeing a distinct remaining count', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 10, refillPerSecond: SLOW };
    const takes = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? limiter : h.peer).take(b, limit)),
    );
    const allowed = takes.filter((t) => t.allowed);
    expect(allowed).toHaveLength(10);
    // Each allowed take spent a different token: no two saw the same bucket state.
    expect(allowed.map((t) => t.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const t of takes.filter((r) => !r.allowed)) {
      expect(t.remaining).toBe(0);
      expect(t.retryAfterMs).toBeGreaterThan(0);
    }
  });

  it('refills over time', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 2, refillPerSecond: 10 };
    expect((await limiter.take(b, limit, 2)).allowed).toBe(true);
    expect((await limiter.take(b, limit, 2)).allowed).toBe(false);
    await h.pass(300); // three tokens' worth at 10/s, capped at two
    expect(await limiter.take(b, limit, 2)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
  });

  it('never refills past capacity', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 3, refillPerSecond: 5 };
    expect((await limiter.take(b, limit)).remaining).toBe(2);
    await h.pass(600); // would add three tokens without the cap
    expect((await limiter.take(b, limit)).remaining).toBe(2);
  });

  it('tells a refused take how long until cost tokens are available, and that wait is enough', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 2, refillPerSecond: 4 }; // one token per 250 ms
    expect((await limiter.take(b, limit, 2)).allowed).toBe(true);
    const one = await limiter.take(b, limit);
    expect(one.allowed).toBe(false);
    expect(one.remaining).toBe(0);
    expect(one.retryAfterMs).toBeGreaterThan(0);
    expect(one.retryAfterMs).toBeLessThanOrEqual(250);
    const two = await limiter.take(b, limit, 2);
    expect(two.allowed).toBe(false);
    // Two missing tokens: more than one token's time away (unless a quarter second passed since the
    // drain), never more than two tokens' time.
    expect(two.retryAfterMs).toBeGreaterThan(250);
    expect(two.retryAfterMs).toBeLessThanOrEqual(500);
    await h.pass(two.retryAfterMs + 20);
    expect((await limiter.take(b, limit, 2)).allowed).toBe(true);
  });

  it('does not spend tokens on a refused take', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 3, refillPerSecond: SLOW };
    expect(await limiter.take(b, limit, 2)).toMatchObject({ allowed: true, remaining: 1 });
    expect((await limiter.take(b, limit, 2)).allowed).toBe(false);
    expect(await limiter.take(b, limit, 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.take(b, limit, 1)).allowed).toBe(false);
  });

  it('spends cost tokens at once for cost > 1', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 5, refillPerSecond: SLOW };
    expect(await limiter.take(b, limit, 3)).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
    const refused = await limiter.take(b, limit, 3);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(60_000); // one missing token at 0.01/s is ~100 s away
    expect(await limiter.take(b, limit, 2)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
  });

  it('keeps separate buckets independent', async () => {
    const a = bucket();
    const b = bucket();
    const limit: BucketLimit = { capacity: 2, refillPerSecond: SLOW };
    expect((await limiter.take(a, limit, 2)).allowed).toBe(true);
    expect((await limiter.take(a, limit)).allowed).toBe(false);
    expect(await limiter.take(b, limit)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('shares one budget between two limiter instances on the same store', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 4, refillPerSecond: SLOW };
    expect(await limiter.take(b, limit, 2)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await h.peer.take(b, limit, 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.take(b, limit)).allowed).toBe(false);
    expect((await h.peer.take(b, limit)).allowed).toBe(false);
  });

  it('refuses a bucket or cost that can never be served with a RangeError', async () => {
    const b = bucket();
    await expect(limiter.take(b, { capacity: 2, refillPerSecond: 1 }, 3)).rejects.toThrow(RangeError);
    await expect(limiter.take(b, { capacity: 0, refillPerSecond: 1 })).rejects.toThrow(RangeError);
    await expect(limiter.take(b, { capacity: 2, refillPerSecond: 0 })).rejects.toThrow(RangeError);
    await expect(limiter.take(b, { capacity: 2, refillPerSecond: 1 }, 0)).rejects.toThrow(RangeError);
    await expect(limiter.take('', { capacity: 2, refillPerSecond: 1 })).rejects.toThrow(RangeError);
    // None of those touched the bucket.
    expect(await limiter.take(b, { capacity: 2, refillPerSecond: SLOW })).toMatchObject({
      allowed: true,
      remaining: 1,
    });
  });
}

describe.each(rateLimiterAdapters)('RateLimiter contract: $name adapter', (adapter) => {
  rateLimiterContract(adapter);
});
