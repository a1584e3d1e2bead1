import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { MemoryRateLimiter, fullRefillMs, takeTokens } from '../../../libs/adapters/memory/index.js';
import type { BucketLimit } from '../../../libs/ports/rate-limiter.js';

describe('takeTokens (the token-bucket step every limiter adapter performs)', () => {
  const limit: BucketLimit = { capacity: 10, refillPerSecond: 2 };

  it('starts full', () => {
    expect(takeTokens(undefined, limit, 3, 1000)).toEqual({
      result: { allowed: true, remaining: 7, retryAfterMs: 0 },
      next: { tokens: 7, atMs: 1000 },
    });
  });

  it('refills continuously, capped at capacity', () => {
    expect(takeTokens({ tokens: 0, atMs: 0 }, limit, 1, 250).next).toEqual({ tokens: 0.5, atMs: 250 });
    expect(takeTokens({ tokens: 0, atMs: 0 }, limit, 1, 250).result.allowed).toBe(false);
    expect(takeTokens({ tokens: 9, atMs: 0 }, limit, 1, 60_000).next.tokens).toBe(9);
  });

  it('answers a refusal with the exact wait until cost tokens exist, rounded up', () => {
    expect(takeTokens({ tokens: 0.5, atMs: 0 }, limit, 1, 0).result).toEqual({
      allowed: false,
      remaining: 0,
      retryAfterMs: 250,
    });
    expect(
      takeTokens({ tokens: 0, atMs: 0 }, { capacity: 3, refillPerSecond: 3 }, 1, 0).result.retryAfterMs,
    ).toBe(334);
  });

  it('reports whole tokens remaining', () => {
    expect(takeTokens({ tokens: 4.9, atMs: 0 }, limit, 1, 0).result.remaining).toBe(3);
  });

  it('credits nothing, and keeps its time, when the clock reads earlier than the stored state', () => {
    const back = takeTokens({ tokens: 1, atMs: 5000 }, limit, 1, 4000);
    expect(back.next).toEqual({ tokens: 0, atMs: 5000 });
    // The interval 4000..5000 is not credited again later.
    expect(takeTokens(back.next, limit, 1, 5500).result).toEqual({
      allowed: true,
      remaining: 0,
      retryAfterMs: 0,
    });
  });

  it('never allows more than capacity + refill over any sequence of takes (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          capacity: fc.integer({ min: 1, max: 50 }),
          refillPerSecond: fc.double({ min: 0.1, max: 100, noNaN: true }),
        }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 1, max: 5 })), {
          maxLength: 200,
        }),
        (lim, steps) => {
          let state;
          let now = 0;
          let spent = 0;
          for (const [gap, rawCost] of steps) {
            now += gap;
            const cost = Math.min(rawCost, lim.capacity);
            const { result, next } = takeTokens(state, lim, cost, now);
            if (result.allowed) spent += cost;
            else expect(result.retryAfterMs).toBeGreaterThan(0);
            expect(next.tokens).toBeGreaterThanOrEqual(0);
            expect(next.tokens).toBeLessThanOrEqual(lim.capacity);
            state = next;
          }
          expect(spent).toBeLessThanOrEqual(lim.capacity + (now * lim.refillPerSecond) / 1000 + 1e-9);
        },
      ),
    );
  });

  it('computes the time until an idle bucket is full', () => {
    expect(fullRefillMs({ capacity: 3, refillPerSecond: 2 })).toBe(1500);
  });
});

describe('MemoryRateLimiter', () => {
  it('waits exactly retryAfterMs on the manual clock', async () => {
    const clock = new ManualClock(0);
    const limiter = new MemoryRateLimiter(clock);
    const limit: BucketLimit = { capacity: 2, refillPerSecond: 4 };
    await limiter.take('b', limit, 2);
    const refused = await limiter.take('b', limit, 2);
    expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterMs: 500 });
    await clock.advance(499);
    expect((await limiter.take('b', limit, 2)).allowed).toBe(false);
    await clock.advance(1);
    expect(await limiter.take('b', limit, 2)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
  });

  it('purgeIdle forgets only buckets that are full again', async () => {
    const clock = new ManualClock(0);
    const limiter = new MemoryRateLimiter(clock);
    await limiter.take('fast', { capacity: 1, refillPerSecond: 10 });
    await limiter.take('slow', { capacity: 1, refillPerSecond: 0.1 });
    await clock.advance(100);
    expect(limiter.purgeIdle()).toBe(1);
    expect((await limiter.take('slow', { capacity: 1, refillPerSecond: 0.1 })).allowed).toBe(false);
  });
});
