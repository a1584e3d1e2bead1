import { ERROR_CODES } from '../core/errors.js';
import { OUTCOMES } from '../core/outcome.js';
import type { CaseReason, CaseState } from '../ports/case-store.js';
import type { BreakerState } from '../execution/breakers.js';
import type { StageDecision, StageName } from '../core/audit-record.js';

/**
 * Label values are a closed set: everything that reaches a label goes through one of these
 * functions, and anything outside the set becomes {@link UNKNOWN_LABEL} (or {@link OTHER_LABEL}).
 * A model inventing tool names, or a new code nobody mapped yet, therefore can never add a time
 * series — the registry's series count is bounded by the deployment, not by traffic.
 */

/** The label value a tool name, outcome or result takes when it is not one we know. */
export const UNKNOWN_LABEL = 'unknown';
/** The label value of a stage or dead-letter reason outside the known list. */
export const OTHER_LABEL = 'other';

/** Whether a name is a tool of the deployment's registry (any tenant). Must be pure and cheap. */
export type KnownToolPredicate = (name: string) => boolean;

const STAGE_NAMES: ReadonlySet<string> = new Set<StageName>([
  'verify-principal',
  'parse-arguments',
  'resolve',
  'validate-input',
  'authorize',
  'rate-limit',
  'business-rules',
  'idempotency',
  'execute',
  'validate-output',
]);
const DECISIONS: ReadonlySet<string> = new Set<StageDecision['decision']>([
  'pass',
  'refuse',
  'short-circuit',
]);
const OUTCOME_SET: ReadonlySet<string> = new Set(OUTCOMES);
const ATTEMPT_RESULTS: ReadonlySet<string> = new Set<string>(['ok', ...ERROR_CODES]);
const CASE_REASONS: ReadonlySet<string> = new Set<CaseReason>(['UNRESOLVED', 'EXHAUSTED', 'POISON']);

/** Every case state, in the order the gauge reports them. */
export const CASE_STATES: readonly CaseState[] = [
  'open',
  'needs_manual',
  'resolved_failed',
  'resolved_succeeded',
];

/** Breaker state → gauge value: 0 closed, 1 half-open, 2 open (higher is worse, for alerts). */
export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = {
  closed: 0,
  'half-open': 1,
  open: 2,
};

/**
 * The tool label: the name when `isKnownTool` says it is registered, else "unknown". A predicate
 * that throws counts as "not known" — a label must never fail a call's bookkeeping.
 */
export function toolLabel(name: unknown, isKnownTool: KnownToolPredicate): string {
  if (typeof name !== 'string' || name === UNKNOWN_LABEL) return UNKNOWN_LABEL;
  try {
    return isKnownTool(name) ? name : UNKNOWN_LABEL;
  } catch {
    return UNKNOWN_LABEL;
  }
}

/** One of OUTCOMES, else "unknown". */
export function outcomeLabel(outcome: unknown): string {
  return typeof outcome === 'string' && OUTCOME_SET.has(outcome) ? outcome : UNKNOWN_LABEL;
}

/** One of the pipeline's stage names, else "other" (a custom stage array may add stages). */
export function stageLabel(stage: unknown): string {
  return typeof stage === 'string' && STAGE_NAMES.has(stage) ? stage : OTHER_LABEL;
}

/** pass / refuse / short-circuit, else "unknown". */
export function decisionLabel(decision: unknown): string {
  return typeof decision === 'string' && DECISIONS.has(decision) ? decision : UNKNOWN_LABEL;
}

/** "ok" or an ErrorCode, else "unknown". */
export function attemptResultLabel(result: unknown): string {
  return typeof result === 'string' && ATTEMPT_RESULTS.has(result) ? result : UNKNOWN_LABEL;
}

/** UNRESOLVED / EXHAUSTED / POISON, else "other". */
export function deadLetterReasonLabel(reason: unknown): string {
  return typeof reason === 'string' && CASE_REASONS.has(reason) ? reason : OTHER_LABEL;
}
