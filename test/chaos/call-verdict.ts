import type {
  DeadLetterEvent,
  ToolCallRequestedEvent,
  ToolCallResultEvent,
} from '../../libs/events/contracts.js';
import type { EffectCounts } from './safety-ledger.js';

/**
 * What the network scenarios conclude about a set of calls from what left the system: the result
 * events (every copy, from every executor that answered), the dead letters and the downstream's
 * effect rows. A call may be answered more than once (a zombie executor publishing after the
 * partition moved, a redelivery answered DUPLICATE); the answers must not contradict each other or
 * the effects.
 *
 * - lost: no result at all;
 * - duplicate effect: more than one effect row;
 * - contradiction: an applied answer (SUCCESS / DUPLICATE) next to a definite failure, applied
 *   answers naming different effect rows or a row that does not exist, a definite failure with an
 *   effect, or an EXHAUSTED dead letter for a call answered as applied;
 * - unresolved without case: an UNRESOLVED answer with no UNRESOLVED dead letter (nothing would
 *   ever reconcile it).
 * UNRESOLVED next to an applied answer is no contradiction (unknown, then known) and is counted.
 */
export interface CallVerdict {
  readonly calls: number;
  readonly answered: number;
  readonly lost: string[];
  readonly duplicateEffects: string[];
  readonly contradictions: string[];
  readonly unresolvedWithoutCase: string[];
  /** Calls with an UNRESOLVED answer and also an applied one. */
  readonly unresolvedThenApplied: number;
  /** Calls the tool ran more than once for (deduplicated by the downstream or not). */
  readonly reruns: number;
  readonly openCases: number;
  /** Distinct outcomes per call (`OUTCOME/ERROR_CODE` when the code says more), tallied. */
  readonly outcomes: Record<string, number>;
  /** Result events per producing executor. */
  readonly answersByProducer: Record<string, number>;
  /** Result events beyond one per call. */
  readonly extraAnswers: number;
}

const APPLIED = new Set(['SUCCESS', 'DUPLICATE']);

function rowOf(result: ToolCallResultEvent): number | undefined {
  if (result.payloadJson === null) return undefined;
  const row = (JSON.parse(result.payloadJson) as { row?: unknown }).row;
  return typeof row === 'number' ? row : undefined;
}

export function judgeCalls(
  calls: readonly ToolCallRequestedEvent[],
  results: readonly ToolCallResultEvent[],
  deadLetters: readonly DeadLetterEvent[],
  counts: EffectCounts,
): CallVerdict {
  const ids = new Set(calls.map((c) => c.callId));
  const answers = new Map<string, ToolCallResultEvent[]>();
  const byProducer: Record<string, number> = {};
  let extraAnswers = 0;
  for (const r of results) {
    if (!ids.has(r.callId)) continue;
    const list = answers.get(r.callId) ?? [];
    if (list.length > 0) extraAnswers += 1;
    list.push(r);
    answers.set(r.callId, list);
    byProducer[r.producerId] = (byProducer[r.producerId] ?? 0) + 1;
  }
  const letters = new Map<string, Set<string>>();
  for (const d of deadLetters)
    if (d.callId !== null && ids.has(d.callId))
      letters.set(d.callId, (letters.get(d.callId) ?? new Set()).add(d.reason));

  const lost: string[] = [];
  const duplicateEffects: string[] = [];
  const contradictions: string[] = [];
  const unresolvedWithoutCase: string[] = [];
  const outcomes: Record<string, number> = {};
  let unresolvedThenApplied = 0;
  let reruns = 0;
  let openCases = 0;
  for (const { callId } of calls) {
    const got = answers.get(callId) ?? [];
    const effects = counts.effects.get(callId) ?? 0;
    const rows = counts.rowIds.get(callId) ?? new Set<number>();
    const reasons = letters.get(callId) ?? new Set<string>();
    if ((counts.invocations.get(callId) ?? 0) > 1) reruns += 1;
    if (reasons.has('UNRESOLVED')) openCases += 1;
    const describe = (): string =>
      `${callId}: ${got.map((r) => `${r.outcome}${r.error ? `/${r.error.code}` : ''} row ${rowOf(r) ?? '-'} @${r.producerId} ${new Date(r.completedAtMs).toISOString()}`).join(', ')}; effects: ${(counts.described.get(callId) ?? []).join(', ') || 'none'}; dead letters ${[...reasons].join('+') || 'none'}`;
    if (effects > 1) duplicateEffects.push(describe());
    if (got.length === 0) {
      lost.push(callId);
      continue;
    }
    for (const o of new Set(
      got.map((r) =>
        r.error === null || r.error.code === r.outcome ? r.outcome : `${r.outcome}/${r.error.code}`,
      ),
    ))
      outcomes[o] = (outcomes[o] ?? 0) + 1;
    const applied = got.filter((r) => APPLIED.has(r.outcome));
    const failed = got.filter((r) => !APPLIED.has(r.outcome) && r.outcome !== 'UNRESOLVED');
    const unresolved = got.some((r) => r.outcome === 'UNRESOLVED');
    if (unresolved && !reasons.has('UNRESOLVED')) unresolvedWithoutCase.push(describe());
    if (unresolved && applied.length > 0) unresolvedThenApplied += 1;
    const appliedRows = new Set(applied.map(rowOf));
    if (applied.length > 0 && failed.length > 0) contradictions.push(`applied and failed: ${describe()}`);
    if (appliedRows.size > 1) contradictions.push(`applied with different rows: ${describe()}`);
    for (const row of appliedRows)
      if (row === undefined || !rows.has(row))
        contradictions.push(`applied, but no such effect: ${describe()}`);
    if (failed.some((r) => r.error?.code !== 'BAD_OUTPUT') && effects > 0)
      contradictions.push(`failed, but the effect exists: ${describe()}`);
    if (applied.length > 0 && reasons.has('EXHAUSTED'))
      contradictions.push(`applied, but dead-lettered EXHAUSTED: ${describe()}`);
  }
  return {
    calls: calls.length,
    answered: calls.length - lost.length,
    lost,
    duplicateEffects,
    contradictions,
    unresolvedWithoutCase,
    unresolvedThenApplied,
    reruns,
    openCases,
    outcomes,
    answersByProducer: byProducer,
    extraAnswers,
  };
}
