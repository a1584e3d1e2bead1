import { ToolgateError } from '../core/errors.js';
import type { OutboundLimiter } from '../pipeline/deps.js';
import type { Clock } from '../core/clock.js';
import type { BucketLimit, RateLimiter } from '../ports/rate-limiter.js';

/** The bucket key of a downstream's outbound budget in the shared rate limiter. */
export function outboundBucketKey(downstream: string): string {
  return `ob:${downstream}`;
}

/**
 * Respects each downstream's own rate limit (a property of the integration, not of the caller): one
 * budget per downstream, shared by every tool and every executor that calls it, because the budget
 * lives in the injected {@link RateLimiter} (Redis in production) under `ob:<downstream>`.
 *
 * Contract:
 * - `acquire(downstream, signal)` resolves once one token was taken. Until then it waits the
 *   limiter's `retryAfterMs` on `clock` and tries again, so a burst queues instead of failing.
 * - A downstream without a configured limit is not limited (resolves at once).
 * - Rejects with `signal.reason` when `signal` aborts first (no token is spent), and with
 *   ToolgateError DEPENDENCY_UNAVAILABLE when the rate limiter's store is unreachable: the request is
 *   then not sent (failing closed protects the shared API key from being throttled or banned).
 * - `onAcquired`, when given, hears of every token taken for a limited downstream with how long the
 *   call waited for it, on `clock` (0 when the budget had one); it must not throw.
 */
export function createOutboundLimiter(
  rateLimiter: RateLimiter,
  limits: Readonly<Record<string, BucketLimit>>,
  clock: Clock,
  onAcquired?: (downstream: string, waitedMs: number) => void,
): OutboundLimiter {
  return {
    async acquire(downstream: string, signal: AbortSignal): Promise<void> {
      const limit = Object.hasOwn(limits, downstream) ? limits[downstream] : undefined;
      if (limit === undefined) return;
      const key = outboundBucketKey(downstream);
      const startedAt = clock.now();
      for (;;) {
        if (signal.aborted) throw signal.reason;
        let answer;
        try {
          answer = await rateLimiter.take(key, limit);
        } catch (err) {
          throw new ToolgateError(
            'DEPENDENCY_UNAVAILABLE',
            'The outbound rate limit could not be checked; the call was not sent.',
            { cause: err },
          );
        }
        if (answer.allowed) {
          onAcquired?.(downstream, clock.now() - startedAt);
          return;
        }
        // At least 1 ms, so a limiter rounding its wait down to 0 cannot spin this loop.
        await clock.sleep(Math.max(1, answer.retryAfterMs), signal);
      }
    },
  };
}
