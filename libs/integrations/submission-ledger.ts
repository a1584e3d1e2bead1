import type pg from 'pg';
import type { Clock } from '../core/clock.js';

/**
 * When a submission to a system without idempotency keys was last sent, per logical call. It makes
 * a status check's "not found" trustworthy (see `StatusCheckAdapter`): a system that commits within
 * a known window after a request is sent can only be said NOT to hold the effect once that window
 * has passed since the LAST send of the call.
 *
 * Contract:
 * - `noteSend(key)` is durable when it resolves and is called BEFORE every send, so a send that
 *   left is always noted (a note whose send never left only makes a later check wait longer).
 * - `sinceLastSend(key)` is the time since the last note for `key`, or undefined when the key was
 *   never noted (then nothing was ever sent for it). Both throw when the store is unreachable.
 * - Every process that submits or checks the same calls (executors, the reconciler) must share one
 *   ledger; the Postgres one is that. The memory one is for a single process.
 */
export interface SubmissionLedger {
  noteSend(key: string): Promise<void>;
  sinceLastSend(key: string): Promise<number | undefined>;
}

/** A single-process {@link SubmissionLedger} on an injected clock. Entries are kept for `retainMs`. */
export class MemorySubmissionLedger implements SubmissionLedger {
  readonly #clock: Clock;
  readonly #retainMs: number;
  readonly #sent = new Map<string, number>();

  constructor(clock: Clock, retainMs = 24 * 3_600_000) {
    this.#clock = clock;
    this.#retainMs = retainMs;
  }

  async noteSend(key: string): Promise<void> {
    const now = this.#clock.now();
    for (const [k, at] of this.#sent) if (now - at > this.#retainMs) this.#sent.delete(k);
    // Re-inserting keeps the map in send order, so the sweep above meets the oldest first.
    this.#sent.delete(key);
    this.#sent.set(key, now);
  }

  async sinceLastSend(key: string): Promise<number | undefined> {
    const at = this.#sent.get(key);
    return at === undefined ? undefined : Math.max(0, this.#clock.now() - at);
  }
}

/**
 * The shared {@link SubmissionLedger} in Postgres (table `status_check_submissions`, created by
 * toolgate's migrations). Times are the database's own clock on both sides, so executors and the
 * reconciler on different hosts agree on "how long ago" without trusting each other's clocks.
 */
export class PostgresSubmissionLedger implements SubmissionLedger {
  constructor(private readonly pool: pg.Pool) {}

  async noteSend(key: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO status_check_submissions (submission_key, last_sent_at, sends)
       VALUES ($1, clock_timestamp(), 1)
       ON CONFLICT (submission_key)
       DO UPDATE SET last_sent_at = clock_timestamp(), sends = status_check_submissions.sends + 1`,
      [key],
    );
  }

  async sinceLastSend(key: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ ms: string }>(
      `SELECT floor(extract(epoch FROM clock_timestamp() - last_sent_at) * 1000)::bigint AS ms
         FROM status_check_submissions WHERE submission_key = $1`,
      [key],
    );
    const row = rows[0];
    return row === undefined ? undefined : Math.max(0, Number(row.ms));
  }

  /** Deletes notes older than `olderThanMs` (run it from a periodic job); returns how many. */
  async purge(olderThanMs: number): Promise<number> {
    const result = await this.pool.query(
      `DELETE FROM status_check_submissions
        WHERE last_sent_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)`,
      [olderThanMs],
    );
    return result.rowCount ?? 0;
  }
}
