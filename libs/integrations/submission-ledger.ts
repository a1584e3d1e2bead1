import type pg from 'pg';
import type { Clock } from '../core/clock.js';

/**
 * The deadlines of sends to a system without idempotency keys, per natural key. It makes a status
 * check's "not found" trustworthy (see `StatusCheckAdapter`): a system that records a submission
 * before the deadline it was sent with, or never, can only be said NOT to hold an effect once the
 * latest deadline noted under its key has passed.
 *
 * Contract:
 * - `noteSend(key, notAfterMs)` is durable when it resolves and is called BEFORE every send, so a
 *   send that left is always noted (a note whose send never left only makes a later check wait
 *   longer). A key keeps the latest of its deadlines.
 * - `sinceLastDeadline(key)` is how long ago that latest deadline passed (negative while it is still
 *   ahead), or undefined when the key was never noted (then nothing was ever sent under it). Both
 *   throw when the store is unreachable.
 * - Every process that submits or checks the same keys (executors, the reconciler) must share one
 *   ledger; the Postgres one is that. The memory one is for a single process.
 */
export interface SubmissionLedger {
  noteSend(key: string, notAfterMs: number): Promise<void>;
  sinceLastDeadline(key: string): Promise<number | undefined>;
}

/** A single-process {@link SubmissionLedger} on an injected clock. Entries are kept for `retainMs` past their deadline. */
export class MemorySubmissionLedger implements SubmissionLedger {
  readonly #clock: Clock;
  readonly #retainMs: number;
  readonly #deadlines = new Map<string, number>();

  constructor(clock: Clock, retainMs = 24 * 3_600_000) {
    this.#clock = clock;
    this.#retainMs = retainMs;
  }

  async noteSend(key: string, notAfterMs: number): Promise<void> {
    const now = this.#clock.now();
    for (const [k, at] of this.#deadlines) if (now - at > this.#retainMs) this.#deadlines.delete(k);
    this.#deadlines.set(key, Math.max(notAfterMs, this.#deadlines.get(key) ?? -Infinity));
  }

  async sinceLastDeadline(key: string): Promise<number | undefined> {
    const at = this.#deadlines.get(key);
    return at === undefined ? undefined : this.#clock.now() - at;
  }
}

/**
 * The shared {@link SubmissionLedger} in Postgres (table `status_check_submissions`, created by
 * toolgate's migrations). A deadline is the sender's clock; "how long ago" is judged by the
 * database's clock, the one every executor and the reconciler share. The difference between the
 * sender's clock and the database's belongs in the adapter's `settleMarginMs`.
 */
export class PostgresSubmissionLedger implements SubmissionLedger {
  constructor(private readonly pool: pg.Pool) {}

  async noteSend(key: string, notAfterMs: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO status_check_submissions (submission_key, last_sent_at, sends, not_after)
       VALUES ($1, clock_timestamp(), 1, to_timestamp($2::double precision / 1000))
       ON CONFLICT (submission_key)
       DO UPDATE SET last_sent_at = clock_timestamp(), sends = status_check_submissions.sends + 1,
                     not_after = greatest(status_check_submissions.not_after, excluded.not_after)`,
      [key, notAfterMs],
    );
  }

  async sinceLastDeadline(key: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ ms: string | null }>(
      `SELECT floor(extract(epoch FROM clock_timestamp() - coalesce(not_after, last_sent_at)) * 1000)::bigint AS ms
         FROM status_check_submissions WHERE submission_key = $1`,
      [key],
    );
    const row = rows[0];
    return row === undefined ? undefined : Number(row.ms);
  }

  /** Deletes notes whose deadline passed more than `olderThanMs` ago (run it from a periodic job); returns how many. */
  async purge(olderThanMs: number): Promise<number> {
    const result = await this.pool.query(
      `DELETE FROM status_check_submissions
        WHERE coalesce(not_after, last_sent_at) < clock_timestamp() - make_interval(secs => $1::double precision / 1000)`,
      [olderThanMs],
    );
    return result.rowCount ?? 0;
  }
}
