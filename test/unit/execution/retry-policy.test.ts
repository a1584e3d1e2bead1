import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffCapMs,
  backoffDelayMs,
  isTransientKind,
  isRetrySafe,
  maxAttempts,
  worstCaseBackoffMs,
} from '../../../libs/execution/retry-policy.js';

const policy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 8_000 };

describe('retry policy', () => {
  it('caps grow exponentially from the base and stop at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 60].map((r) => backoffCapMs(policy, r))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000,
    ]);
    expect(backoffCapMs(policy, 5_000)).toBe(8_000); // 2^4999 is Infinity; the cap stays finite
  });

  it('full jitter: the delay is uniform in [0, cap], pinned by the injected random source', () => {
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0);
    expect(backoffDelayMs(policy, 3, () => 0.5)).toBe(1_000);
    expect(backoffDelayMs(policy, 3, () => 0.999_999_9)).toBe(2_000);
  });

  it('any random source and any policy stay within [0, cap]', () => {
    fc.assert(
      fc.property(
        fc.record({
          maxAttempts: fc.integer({ min: -2, max: 20 }),
          baseDelayMs: fc.oneof(fc.integer({ min: -10, max: 10_000 }), fc.constant(Number.NaN)),
          maxDelayMs: fc.integer({ min: -10, max: 60_000 }),
        }),
        fc.integer({ min: 1, max: 100 }),
        fc.oneof(
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          fc.constant(Number.NaN),
          fc.constant(7),
        ),
        (p, retry, r) => {
          const cap = backoffCapMs(p, retry);
          const delay = backoffDelayMs(p, retry, () => r);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(cap);
          expect(cap).toBeLessThanOrEqual(Math.max(0, p.maxDelayMs));
        },
      ),
    );
  });

  it('attempts are at least one; the worst-case backoff sums the caps between attempts', () => {
    expect(maxAttempts({ maxAttempts: 0, baseDelayMs: 1, maxDelayMs: 1 })).toBe(1);
    expect(maxAttempts(policy)).toBe(5);
    expect(worstCaseBackoffMs(policy)).toBe(500 + 1_000 + 2_000 + 4_000);
    expect(worstCaseBackoffMs({ maxAttempts: 1, baseDelayMs: 500, maxDelayMs: 8_000 })).toBe(0);
  });

  it('only timeouts and server errors are retryable kinds; `none` is never safe', () => {
    expect(isTransientKind('TIMEOUT')).toBe(true);
    expect(isTransientKind('SERVER_ERROR')).toBe(true);
    for (const code of ['CALLER_ERROR', 'BREAKER_OPEN', 'RATE_LIMITED', 'BAD_OUTPUT', 'INTERNAL'] as const) {
      expect(isTransientKind(code)).toBe(false);
    }
    expect(isRetrySafe({ kind: 'none' })).toBe(false);
    expect(isRetrySafe({ kind: 'forwards-key' })).toBe(true);
    expect(isRetrySafe({ kind: 'read-only' })).toBe(true);
  });
});
