import type pg from 'pg';
import type { CaseState } from '../ports/case-store.js';
import type { CaseCountReader } from './source-gauges.js';

/** The states a case is unfinished in: someone (the checker or a person) still owes an answer. */
export const UNFINISHED_CASE_STATES: readonly CaseState[] = ['open', 'needs_manual'];

/**
 * Counts unfinished reconciliation cases per state in the Postgres case store (table
 * `reconciliation_cases` of migration 011, in the pool's search path), for the
 * `toolgate_reconciliation_cases` gauge. Resolved cases are not counted: they only ever grow, and
 * their rate is in the audit log. Both states are always reported (0 when there are none). One
 * indexed GROUP BY per call; rejects when Postgres does.
 */
export function postgresCaseCounts(pool: Pick<pg.Pool, 'query'>): CaseCountReader {
  return async () => {
    const { rows } = await pool.query<{ state: string; n: string }>(
      `SELECT state, count(*)::text AS n FROM reconciliation_cases WHERE state = ANY($1::text[]) GROUP BY state`,
      [UNFINISHED_CASE_STATES],
    );
    const counts: Partial<Record<CaseState, number>> = {};
    for (const state of UNFINISHED_CASE_STATES) counts[state] = 0;
    for (const row of rows) {
      if ((UNFINISHED_CASE_STATES as readonly string[]).includes(row.state)) {
        counts[row.state as CaseState] = Number(row.n);
      }
    }
    return counts;
  };
}
