import type pg from 'pg';
import type { CaseState } from '../ports/case-store.js';
import type { CaseCountReader, CaseCounts } from './source-gauges.js';

/** The states a case is unfinished in: someone (the checker or a person) still owes an answer. */
export const UNFINISHED_CASE_STATES: readonly CaseState[] = ['open', 'needs_manual'];

/**
 * Reads the unfinished reconciliation cases of the Postgres case store (table
 * `reconciliation_cases` of migration 011, in the pool's search path) for the
 * `toolgate_reconciliation_cases` and `toolgate_reconciliation_oldest_case_age_seconds` gauges.
 *
 * Counts: both unfinished states are always reported (0 when there are none). Resolved cases are
 * not counted: they only ever grow, and their rate is in the audit log.
 *
 * Ages: `now() - min(created_at_ms)` per state in seconds, with `now` read after the query returns,
 * so the age is never younger than the case really is. A state with no case is absent (no sample).
 * `created_at_ms` is written from the case store's clock, so `now` must be the same time base (the
 * default, `Date.now`, matches a store on the system clock). A negative difference (clock stepped
 * back) reports 0.
 *
 * One indexed GROUP BY per call; rejects when Postgres does.
 */
export function postgresCaseCounts(
  pool: Pick<pg.Pool, 'query'>,
  now: () => number = Date.now,
): CaseCountReader {
  return async (): Promise<CaseCounts> => {
    const { rows } = await pool.query<{ state: string; n: string; oldest_ms: string }>(
      `SELECT state, count(*)::text AS n, min(created_at_ms)::text AS oldest_ms
         FROM reconciliation_cases WHERE state = ANY($1::text[]) GROUP BY state`,
      [UNFINISHED_CASE_STATES],
    );
    const at = now();
    const counts: Partial<Record<CaseState, number>> = {};
    const oldestAgeSeconds: Partial<Record<CaseState, number>> = {};
    for (const state of UNFINISHED_CASE_STATES) counts[state] = 0;
    for (const row of rows) {
      if (!(UNFINISHED_CASE_STATES as readonly string[]).includes(row.state)) continue;
      const state = row.state as CaseState;
      counts[state] = Number(row.n);
      oldestAgeSeconds[state] = Math.max(0, at - Number(row.oldest_ms)) / 1000;
    }
    return { counts, oldestAgeSeconds };
  };
}
