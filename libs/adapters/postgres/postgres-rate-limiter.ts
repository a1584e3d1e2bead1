import type pg from 'pg';
import type { BucketLimit, RateLimiter, TakeResult } from '../../ports/rate-limiter.js';
import { checkKey, checkTake } from '../memory/argument-checks.js';

/**
 * Refill and take in one statement. The inner SELECT ... FOR UPDATE locks the bucket row and reads its
 * newest version (after waiting for any concurrent take), so `available` is computed from the state
 * the UPDATE then overwrites: two takes never both spend the last token. `at` never moves backwards
 * (GREATEST with the stored time), so no interval is credited twice when a statement's clock reading
 * is older than the row's.
 *
 * $1 key, $2 capacity, $3 refill per second, $4 cost.
 */
const TAKE_SQL = `
UPDATE rate_limit_buckets AS b
   SET tokens = s.left_after,
       refilled_at = s.at,
       full_at = s.at + (($2::float8 - s.left_after) / $3::float8) * interval '1 second'
  FROM (
    SELECT key, at, available,
           CASE WHEN available >= $4::float8 THEN available - $4::float8 ELSE available END AS left_after
      FROM (
        SELECT key, at,
               LEAST($2::float8, tokens + extract(epoch FROM at - refilled_at)::float8 * $3::float8) AS available
          FROM (
            SELECT key, tokens, refilled_at, GREATEST(refilled_at, clock_timestamp()) AS at
              FROM rate_limit_buckets
             WHERE key = $1::text
               FOR UPDATE
          ) locked
      ) refilled
  ) s
 WHERE b.key = s.key
RETURNING s.available, s.left_after`;

/** First take of a bucket: create it full, minus the cost. Loses quietly to a concurrent creator. */
const CREATE_SQL = `
INSERT INTO rate_limit_buckets (key, tokens, refilled_at, full_at)
VALUES ($1::text, $2::float8 - $4::float8, clock_timestamp(),
        clock_timestamp() + ($4::float8 / $3::float8) * interval '1 second')
ON CONFLICT (key) DO NOTHING`;

/**
 * Token buckets in Postgres, table `rate_limit_buckets` (migration 002_rate_limit.sql; run migrate
 * first), one row per bucket, shared by every executor using the database. Each take is one atomic
 * UPDATE ... FROM (SELECT ... FOR UPDATE) ... RETURNING on the database's clock; a bucket's first take
 * inserts its row. Throws when the database is unreachable (callers fail closed).
 */
export class PostgresRateLimiter implements RateLimiter {
  constructor(private readonly pool: pg.Pool) {}

  async take(bucketKey: string, limit: BucketLimit, cost?: number): Promise<TakeResult> {
    checkKey('bucketKey', bucketKey);
    const effectiveCost = checkTake(limit, cost);
    const params = [bucketKey, limit.capacity, limit.refillPerSecond, effectiveCost];
    // Two rounds at most: either the row exists and the UPDATE takes, or the INSERT creates it, or a
    // concurrent first take created it in between and the second UPDATE takes.
    for (let round = 0; round < 2; round += 1) {
      const updated = await this.pool.query<{ available: number; left_after: number }>(TAKE_SQL, params);
      const row = updated.rows[0];
      if (row !== undefined) return answer(row.available, row.left_after, limit, effectiveCost);
      const created = await this.pool.query(CREATE_SQL, params);
      if (created.rowCount === 1)
        return answer(limit.capacity, limit.capacity - effectiveCost, limit, effectiveCost);
    }
    throw new Error(`rate limit bucket ${bucketKey} vanished while taking from it`);
  }

  /**
   * Deletes buckets idle long enough to be full again (the same as absent); returns how many. This only
   * reclaims space: run it periodically.
   */
  async purgeIdle(): Promise<number> {
    const result = await this.pool.query('DELETE FROM rate_limit_buckets WHERE full_at <= clock_timestamp()');
    return result.rowCount ?? 0;
  }
}

function answer(available: number, leftAfter: number, limit: BucketLimit, cost: number): TakeResult {
  if (available >= cost) return { allowed: true, remaining: Math.floor(leftAfter), retryAfterMs: 0 };
  return {
    allowed: false,
    remaining: 0,
    retryAfterMs: Math.ceil(((cost - available) * 1000) / limit.refillPerSecond),
  };
}
