import type { BucketLimit, TakeResult } from '../../ports/rate-limiter.js';

/** One bucket's state: a (possibly fractional) token count as of `atMs`. */
export interface BucketState {
  readonly tokens: number;
  readonly atMs: number;
}

/**
 * The token-bucket step every rate-limiter adapter performs (the Redis script and the Postgres
 * statement compute the same thing in their own language). Pure: given the previous state (undefined
 * = never used = full), the time and the cost, returns the answer and the state to store.
 *
 * Time never runs backwards for a bucket: a `nowMs` earlier than the stored `atMs` (another
 * executor's clock, a clock step) refills nothing and keeps `atMs`, so no interval is credited twice.
 */
export function takeTokens(
  previous: BucketState | undefined,
  limit: BucketLimit,
  cost: number,
  nowMs: number,
): { readonly result: TakeResult; readonly next: BucketState } {
  const atMs = previous === undefined ? nowMs : Math.max(previous.atMs, nowMs);
  const available =
    previous === undefined
      ? limit.capacity
      : Math.min(limit.capacity, previous.tokens + ((atMs - previous.atMs) * limit.refillPerSecond) / 1000);
  if (available >= cost) {
    const tokens = available - cost;
    return {
      result: { allowed: true, remaining: Math.floor(tokens), retryAfterMs: 0 },
      next: { tokens, atMs },
    };
  }
  const retryAfterMs = Math.ceil(((cost - available) * 1000) / limit.refillPerSecond);
  return { result: { allowed: false, remaining: 0, retryAfterMs }, next: { tokens: available, atMs } };
}

/** How long an untouched bucket takes to refill completely; after that its state equals "absent". */
export function fullRefillMs(limit: BucketLimit): number {
  return Math.ceil((limit.capacity * 1000) / limit.refillPerSecond);
}
