import { describe, expect, it } from 'vitest';
import type { BucketLimit, RateLimiter, TakeResult } from '../../libs/ports/rate-limiter.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { rateLimiterAdapters, type AdapterCase, type Harness } from './store-harnesses.js';
import { between, expectMayHavePassed, timed, withGrowingPeriod, type Timed } from './store-time.js';

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
    // `fullMs`: the time the two tokens take to come back (200 ms: 10/s).
    await withGrowingPeriod(200, async (fullMs) => {
      const b = bucket();
      const limit: BucketLimit = { capacity: 2, refillPerSecond: 2_000 / fullMs };
      const drained = await timed(h, () => limiter.take(b, limit, 2));
      expect(drained.value.allowed).toBe(true);
      const again = await timed(h, () => limiter.take(b, limit, 2));
      if (again.value.allowed) {
        // Allowed only if the bucket may have refilled in between: too slow a machine for this rate.
        expectMayHavePassed(fullMs, drained, again);
        return false;
      }
      await h.pass(fullMs * 1.5); // three tokens' worth, capped at two
      expect(await limiter.take(b, limit, 2)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
      return true;
    });
  });

  it('never refills past capacity', async () => {
    const b = bucket();
    const limit: BucketLimit = { capacity: 3, refillPerSecond: 5 };
    expect((await limiter.take(b, limit)).remaining).toBe(2);
    await h.pass(600); // would add three tokens without the cap
    expect((await limiter.take(b, limit)).remaining).toBe(2);
  });

  it('tells a refused take how long until cost tokens are available, and that wait is enough', async () => {
    // `tokenMs`: the time one token takes to come back (250 ms: 4/s).
    await withGrowingPeriod(250, async (tokenMs) => {
      const b = bucket();
      const limit: BucketLimit = { capacity: 2, refillPerSecond: 1_000 / tokenMs };
      const drained = await timed(h, () => limiter.take(b, limit, 2));
      expect(drained.value.allowed).toBe(true);
      /** The wait for `tokens` tokens, asked in `asked`: their refill time less what passed since the drain. */
      const expectWaitFor = (tokens: number, asked: Timed<TakeResult>): void => {
        const passed = between(drained, asked);
        expect(asked.value).toMatchObject({ allowed: false, remaining: 0 });
        expect(asked.value.retryAfterMs).toBeGreaterThan(0);
        expect(asked.value.retryAfterMs).toBeGreaterThanOrEqual(tokens * tokenMs - passed.mostMs);
        expect(asked.value.retryAfterMs).toBeLessThanOrEqual(tokens * tokenMs - passed.leastMs + 1);
      };
      const one = await timed(h, () => limiter.take(b, limit));
      const two = await timed(h, () => limiter.take(b, limit, 2));
      if (one.value.allowed || between(drained, two).mostMs >= tokenMs) {
        // A token may have come back before the two takes: too slow a machine for this rate.
        expectMayHavePassed(tokenMs, drained, one.value.allowed ? one : two);
        return false;
      }
      // One missing token: at most one token's time away. Two: more than that, at most two tokens' time.
      expectWaitFor(1, one);
      expect(one.value.retryAfterMs).toBeLessThanOrEqual(tokenMs);
      expectWaitFor(2, two);
      expect(two.value.retryAfterMs).toBeGreaterThan(tokenMs);
      expect(two.value.retryAfterMs).toBeLessThanOrEqual(2 * tokenMs);
      await h.pass(two.value.retryAfterMs + 20);
      expect((await limiter.take(b, limit, 2)).allowed).toBe(true);
      return true;
    });
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
