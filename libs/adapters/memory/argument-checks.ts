import type { BucketLimit } from '../../ports/rate-limiter.js';

/**
 * Input checks shared by every store adapter (memory, Redis, Postgres), so all of them refuse the same
 * arguments with the same RangeError instead of each backend failing in its own way (a Redis PEXPIRE
 * with a fraction, a Postgres interval overflow). Throwing here is a programming error in the caller,
 * never a store outage.
 */

/** Returns `ms` rounded up to a whole millisecond; throws RangeError unless it is finite and > 0. */
export function checkDurationMs(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new RangeError(`${name} must be a finite number of milliseconds > 0, got ${ms}`);
  }
  return Math.ceil(ms);
}

/** Returns the effective cost (default 1); throws RangeError on a bucket or cost that can never be served. */
export function checkTake(limit: BucketLimit, cost = 1): number {
  if (!Number.isFinite(limit.capacity) || limit.capacity <= 0) {
    throw new RangeError(`capacity must be a finite number > 0, got ${limit.capacity}`);
  }
  if (!Number.isFinite(limit.refillPerSecond) || limit.refillPerSecond <= 0) {
    throw new RangeError(`refillPerSecond must be a finite number > 0, got ${limit.refillPerSecond}`);
  }
  // A cost above capacity could never be allowed, so there would be no honest retryAfterMs to give.
  if (!Number.isFinite(cost) || cost <= 0 || cost > limit.capacity) {
    throw new RangeError(`cost must be > 0 and <= capacity (${limit.capacity}), got ${cost}`);
  }
  return cost;
}

/** Throws RangeError when a key is empty: an empty key would silently share one record across callers. */
export function checkKey(name: string, key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new RangeError(`${name} must be a non-empty string`);
  }
}
