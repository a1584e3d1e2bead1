import type { Clock } from '../../core/clock.js';
import type { BucketLimit, RateLimiter, TakeResult } from '../../ports/rate-limiter.js';
import { checkKey, checkTake } from './argument-checks.js';
import { settle } from '../../core/settle.js';
import { deleteWhere } from './delete-where.js';
import { fullRefillMs, takeTokens, type BucketState } from './token-bucket.js';

/**
 * Token buckets held in this process: the embedded default (demo, single executor, tests). Budgets
 * are per instance, not shared across processes; use the Redis or Postgres limiter for that.
 *
 * `take` runs synchronously between awaits, so concurrent takes are serialised by the event loop and
 * never both spend the last token. Time comes from the injected clock.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { state: BucketState; idleAfterMs: number }>();

  constructor(private readonly clock: Clock) {}

  take(bucketKey: string, limit: BucketLimit, cost?: number): Promise<TakeResult> {
    return settle(() => {
      checkKey('bucketKey', bucketKey);
      const effectiveCost = checkTake(limit, cost);
      const { result, next } = takeTokens(
        this.buckets.get(bucketKey)?.state,
        limit,
        effectiveCost,
        this.clock.now(),
      );
      this.buckets.set(bucketKey, { state: next, idleAfterMs: next.atMs + fullRefillMs(limit) });
      return result;
    });
  }

  /**
   * Forgets buckets that have been idle long enough to be full again (indistinguishable from absent),
   * so a long-running process does not keep one entry per key forever. Returns how many were dropped.
   */
  purgeIdle(): number {
    const now = this.clock.now();
    return deleteWhere(this.buckets, (bucket) => bucket.idleAfterMs <= now);
  }
}
