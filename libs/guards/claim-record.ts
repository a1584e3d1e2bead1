import { taskResourceKey } from '../core/idempotency-key.js';
import type { Outcome } from '../core/outcome.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { Verdict } from '../pipeline/stage.js';
import type { ToolDefinition } from '../registry/tool-definition.js';

/**
 * Tools that never take an idempotency claim: they have no side effect, so running them twice is
 * harmless and a claim would only cost a store round trip.
 */
export function isReadOnlyTool(tool: ToolDefinition): boolean {
  return !tool.stateChanging || tool.retrySafety.kind === 'read-only';
}

/**
 * The resource a call touches: its partition and serialization key, from the tool's `conflictKey`
 * over the validated arguments; the task's key when the tool declares none (or it throws).
 */
export function resourceKeyOf(tool: ToolDefinition, state: CallState): string {
  const fallback = taskResourceKey(state.ctx);
  if (tool.conflictKey === undefined || state.args === undefined) return fallback;
  try {
    return tool.conflictKey(state.args, state.ctx);
  } catch {
    return fallback;
  }
}

/**
 * Whether this call holds an idempotency claim: true exactly when the idempotency layer passed a
 * state-changing call (it runs the inner layers only after a `claimed` or `taken-over` answer).
 */
export function holdsClaim(state: CallState): boolean {
  return state.idempotencyKey !== undefined && state.tool !== undefined && !isReadOnlyTool(state.tool);
}

/** The outcome a verdict ends the call with: SUCCESS for `done`. */
export function verdictOutcome(verdict: Verdict): Outcome {
  return verdict.kind === 'done'
    ? 'SUCCESS'
    : verdict.kind === 'finish'
      ? verdict.outcome
      : verdict.error.outcome;
}

/**
 * Whether the call's effect may have happened, by how the layers inside the idempotency layer ended
 * it: SUCCESS, UNRESOLVED, or any ending after the effect applied. Exactly the endings
 * {@link settleClaim} completes the claim for rather than releasing it.
 */
export function effectMayHaveHappened(state: CallState, verdict: Verdict): boolean {
  const outcome = verdictOutcome(verdict);
  return outcome === 'SUCCESS' || outcome === 'UNRESOLVED' || state.effect === 'applied';
}

/**
 * Settles this call's claim from how the layers inside the idempotency layer ended it. This is the
 * one place a claim is completed or released; the idempotency layer calls it once, after `next()`,
 * whatever happened inside (`next()` never rejects: a throw there is already a verdict).
 *
 * - `done`, or a `finish` with SUCCESS → completed SUCCESS with the output the requester got
 *   (`state.output`, redacted), so duplicates get exactly that;
 * - UNRESOLVED → completed UNRESOLVED: never re-run; the reconciler settles it;
 * - any other ending after the effect happened (`state.effect === 'applied'`: e.g. the output was
 *   refused) → completed EXECUTION_ERROR with the error's code and message, so a duplicate repeats
 *   the refusal instead of the effect;
 * - any other ending when the effect definitely did not happen (`state.effect === 'absent'`, or the
 *   tool was not invoked in this run and no earlier owner may have applied it) → released, so a
 *   later retry may run; the key's tombstone (`deps.tombstones`) is cleared first;
 * - otherwise (a call taken over from a stopped owner that ended before anything was known about
 *   the effect) → left to its lease, after which the next claimant takes the tool's safe path again.
 *
 * Resolves whether the store was changed. A store failure or a lost lease is not the caller's
 * problem: the answer stands, and the key stays in flight until its lease runs out. Never rejects.
 */
export async function settleClaim(state: CallState, deps: PipelineDeps, verdict: Verdict): Promise<boolean> {
  if (!holdsClaim(state)) return false;
  const key = state.idempotencyKey!;
  const error = verdict.kind === 'done' ? undefined : verdict.error;
  const outcome = verdictOutcome(verdict);
  if (outcome === 'SUCCESS') {
    const output = verdict.kind === 'finish' ? verdict.payload : state.output;
    return complete(key, deps, 'SUCCESS', output);
  }
  const refusal = { code: error?.code ?? 'INTERNAL', message: error?.message ?? '' };
  if (outcome === 'UNRESOLVED') return complete(key, deps, 'UNRESOLVED', refusal);
  if (state.effect === 'applied') return complete(key, deps, 'EXECUTION_ERROR', refusal);
  const nothingRan = state.toolInvocations === 0 && state.takenOver !== true;
  if (state.effect === 'absent' || nothingRan) return release(key, deps);
  return false;
}

async function complete(
  key: string,
  deps: PipelineDeps,
  outcome: Outcome,
  result: unknown,
): Promise<boolean> {
  try {
    return await deps.idempotency.complete(
      key,
      deps.owner,
      { outcome, result: result === undefined ? null : result, completedAtMs: deps.clock.now() },
      deps.settings.resultTtlMs,
    );
  } catch {
    return false;
  }
}

async function release(key: string, deps: PipelineDeps): Promise<boolean> {
  // The next claim of this key is a first run, not a repeat: the tombstone goes first, so no new
  // claimant can find it once the key is free (a rare path: one more round trip).
  await deps.tombstones?.clear(key).catch(() => undefined);
  try {
    return await deps.idempotency.release(key, deps.owner);
  } catch {
    return false;
  }
}
