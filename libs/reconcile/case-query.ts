import { ToolgateError } from '../core/errors.js';
import type { CaseState, ReconciliationCase } from '../ports/case-store.js';

/** The most a {@link CaseFilter.offset} may skip (deeper paging: narrow the filters). */
export const MAX_CASE_OFFSET = 1_000_000;
/** The longest free-text search. */
export const MAX_CASE_SEARCH = 200;
/** Every case state, in the order a console shows counts. */
export const CASE_STATES: readonly CaseState[] = [
  'open',
  'needs_manual',
  'resolved_succeeded',
  'resolved_failed',
];

/** `offset` as a whole number 0…{@link MAX_CASE_OFFSET}; absent → 0. Throws SCHEMA_INVALID when not finite. */
export function caseOffset(offset: number | undefined): number {
  if (offset === undefined) return 0;
  if (!Number.isFinite(offset)) throw new ToolgateError('SCHEMA_INVALID', 'offset must be a finite number.');
  return Math.min(MAX_CASE_OFFSET, Math.max(0, Math.floor(offset)));
}

/** The search text as both adapters compare it: lower-cased; undefined for none. Throws when too long. */
export function caseSearch(search: string | undefined): string | undefined {
  if (search === undefined || search === '') return undefined;
  if (search.length > MAX_CASE_SEARCH)
    throw new ToolgateError('SCHEMA_INVALID', `search is longer than ${MAX_CASE_SEARCH} characters.`);
  return search.toLowerCase();
}

/**
 * The texts a search looks in: case id, dead-letter id, call id, trace id, tool, and the dead
 * letter's error message. The Postgres adapter searches the same columns.
 */
export function caseSearchTexts(c: ReconciliationCase): string[] {
  const error = c.context.errorMessage;
  return [c.caseId, c.deadLetterId, c.callId, c.traceId, c.tool, typeof error === 'string' ? error : null]
    .filter((t): t is string => t !== null)
    .map((t) => t.toLowerCase());
}

/** A count of zero for every state. */
export function zeroCounts(): Record<CaseState, number> {
  return { open: 0, needs_manual: 0, resolved_succeeded: 0, resolved_failed: 0 };
}
