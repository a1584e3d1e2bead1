/**
 * The closed set of terminal outcomes a tool call can have. Every call that enters toolgate ends in
 * exactly one of these, or in an open reconciliation case.
 *
 * - SUCCESS: the tool ran and its output passed validation.
 * - DUPLICATE: an earlier attempt with the same idempotency key already produced a result; that
 *   original result is returned and the tool is not run again.
 * - UNKNOWN_TOOL / SCHEMA_INVALID / UNAUTHORIZED / RATE_LIMITED / POLICY_VIOLATION: refused before the
 *   tool was reached (stages 0–4 have no side effects).
 * - EXECUTION_ERROR: the tool was reached and definitely did not apply its effect (or its output was
 *   refused).
 * - UNRESOLVED: a state-changing call whose effect may or may not have happened. Never reported as a
 *   failure; it is reconciled.
 */
export const OUTCOMES = [
  'SUCCESS',
  'DUPLICATE',
  'UNKNOWN_TOOL',
  'SCHEMA_INVALID',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'POLICY_VIOLATION',
  'EXECUTION_ERROR',
  'UNRESOLVED',
] as const;

export type Outcome = (typeof OUTCOMES)[number];

/** Outcomes that mean the tool's effect is known to have been applied (now or by an earlier attempt). */
export function isEffectApplied(outcome: Outcome): boolean {
  return outcome === 'SUCCESS' || outcome === 'DUPLICATE';
}
