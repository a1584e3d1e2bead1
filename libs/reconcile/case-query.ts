import { ToolgateError } from '../core/errors.js';
import type { CaseState, ReconciliationCase } from '../ports/case-store.js';

/** The longest free-text search. */
export const MAX_CASE_SEARCH = 200;
/** Every case state, in the order a console shows counts. */
export const CASE_STATES: readonly CaseState[] = [
  'open',
  'needs_manual',
  'resolved_succeeded',
  'resolved_failed',
];

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
