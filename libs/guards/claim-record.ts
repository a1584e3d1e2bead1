import type { Outcome } from '../core/outcome.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { ToolDefinition } from '../registry/tool-definition.js';

/**
 * Tools that never take an idempotency claim: they have no side effect, so running them twice is
 * harmless and a claim would only cost a store round trip.
 */
export function isReadOnlyTool(tool: ToolDefinition): boolean {
  return !tool.stateChanging || tool.retrySafety.kind === 'read-only';
}

/**
 * Whether this call holds an idempotency claim that stages 6–7 must settle (complete or release).
 * True exactly when the idempotency stage passed a state-changing call: it continues only after a
 * `claimed` or `taken-over` answer.
 */
export function holdsClaim(state: CallState): boolean {
  return state.idempotencyKey !== undefined && state.tool !== undefined && !isReadOnlyTool(state.tool);
}

/**
 * Records the final answer under the claimed key so every later duplicate gets it without running the
 * tool: SUCCESS with the redacted output, UNRESOLVED (never re-run; the reconciler settles it), or
 * EXECUTION_ERROR when the effect happened but its output was refused.
 *
 * Returns whether the record was written. A store failure or a lost lease is not the caller's
 * problem: the answer stands, and the key stays in flight until its lease runs out, after which a
 * duplicate takes the tool's safe path.
 */
export async function completeClaim(
  state: CallState,
  deps: PipelineDeps,
  outcome: Outcome,
  result: unknown,
): Promise<boolean> {
  if (!holdsClaim(state)) return false;
  try {
    return await deps.idempotency.complete(
      state.idempotencyKey!,
      deps.owner,
      { outcome, result: result === undefined ? null : result, completedAtMs: deps.clock.now() },
      deps.settings.resultTtlMs,
    );
  } catch {
    return false;
  }
}

/**
 * Gives the key back because the effect definitely did not happen (caller error, breaker open before
 * the call, a server error reported by the downstream, no outbound token in time), so a later retry
 * may run; the key's tombstone (`deps.tombstones`) is cleared with it. Returns whether it was
 * released; a store failure leaves the lease to expire instead.
 */
export async function releaseClaim(state: CallState, deps: PipelineDeps): Promise<boolean> {
  if (!holdsClaim(state)) return false;
  const key = state.idempotencyKey!;
  // The next claim of this key is a first run, not a repeat: the tombstone goes first, so no new
  // claimant can find it once the key is free (a rare path: one more round trip).
  await deps.tombstones?.clear(key).catch(() => undefined);
  try {
    return await deps.idempotency.release(key, deps.owner);
  } catch {
    return false;
  }
}
