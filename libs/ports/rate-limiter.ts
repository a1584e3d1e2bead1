/** A token bucket: `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface BucketLimit {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

export interface TakeResult {
  readonly allowed: boolean;
  /** Whole tokens left after this take (0 when refused). */
  readonly remaining: number;
  /** When refused: how long until `cost` tokens are available. 0 when allowed. */
  readonly retryAfterMs: number;
}

/**
 * Token buckets shared by every executor using the same backing store. `take` is atomic: two
 * concurrent takes never both spend the last token. Throws when the store is unreachable.
 */
export interface RateLimiter {
  take(bucketKey: string, limit: BucketLimit, cost?: number): Promise<TakeResult>;
}
