import type { ToolgateError } from '../core/errors.js';
import { settleMsOf } from '../execution/retry-policy.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { StatusCheckSafety, ToolDefinition } from '../registry/tool-definition.js';
import { invocation, runGuarded } from './run-attempt.js';

/**
 * What the executor makes of a status check: the effect exists (with the result the check found),
 * it certainly does not, nobody can tell yet, or the check refused the call (a caller error, e.g.
 * the natural key already holds a different effect: nothing may be sent).
 */
export type CheckVerdict =
  | { readonly state: 'applied'; readonly result: unknown }
  | { readonly state: 'not-applied' }
  | { readonly state: 'unknown' }
  | { readonly state: 'refused'; readonly error: ToolgateError };

/** The first wait between two checks while settling, and the longest; doubles in between. */
const SETTLE_POLL_FIRST_MS = 50;
const SETTLE_POLL_MAX_MS = 1_000;

/**
 * How long {@link settle} may go on after the send it settles: the tool's settle window plus one
 * timeout for the checks past it. The claim's lease counts it once per send and once before the
 * first (`claimLeaseMs`).
 */
export function settleBudgetMs(tool: ToolDefinition): number {
  return settleMsOf(tool.retrySafety) + tool.timeoutMs;
}

/**
 * Asks the tool's status check until its answer is decisive — the rule that keeps a status-check
 * tool at one effect: "not applied" is acted on only when it is true.
 *
 * `sendEndedAtMs` is when the last send that may still land ended (this executor's own, or the take-
 * over instant for a previous owner's: its sends were fenced by the lease that ran out before the
 * take-over); undefined when nothing was ever sent for the call. A `not-applied` answer counts only
 * from a check that started `settleMs` or more after it; before, it is `unknown`, and so is a check
 * that fails, times out or answers something malformed. Polls with backoff (50 ms doubling to 1 s)
 * until the answer is decisive or {@link settleBudgetMs} after `sendEndedAtMs` (after now, when
 * nothing was sent) has passed, the call's deadline or its caller stops it. Never throws.
 *
 * `sends` is the number of sends this execution made before (the check's `inv.attempt`).
 */
export async function settle(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  safety: StatusCheckSafety<unknown>,
  key: string,
  sendEndedAtMs: number | undefined,
  sends: number,
): Promise<CheckVerdict> {
  const settleMs = settleMsOf(safety);
  const trustFromMs = sendEndedAtMs === undefined ? -Infinity : sendEndedAtMs + settleMs;
  const stopAtMs = (sendEndedAtMs ?? deps.clock.now()) + settleBudgetMs(tool);
  let delay = SETTLE_POLL_FIRST_MS;
  for (;;) {
    const startedAtMs = deps.clock.now();
    const answer = await checkOnce(state, deps, tool, safety, key, sends);
    if (answer.state === 'applied' || answer.state === 'refused') return answer;
    if (answer.state === 'not-applied' && startedAtMs >= trustFromMs) return answer;
    const now = deps.clock.now();
    // Wait at least until a not-applied could be trusted, but never past the budget.
    const wait = Math.min(Math.max(delay, trustFromMs - now), stopAtMs - now);
    if (wait <= 0 || !(await pauseFor(state, deps, wait))) return { state: 'unknown' };
    delay = Math.min(delay * 2, SETTLE_POLL_MAX_MS);
  }
}

/**
 * One status check under the same limits as an attempt (outbound token, breaker, timeout,
 * deadline), because it is a request to the same service. Status checks are not tool invocations:
 * they are not counted in `toolInvocations` nor recorded as attempts.
 */
async function checkOnce(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  safety: StatusCheckSafety<unknown>,
  key: string,
  sends: number,
): Promise<CheckVerdict> {
  const outcome = await runGuarded(state, deps, tool, (limits) =>
    safety.check(state.args, invocation(state, key, sends, limits)),
  );
  if (!outcome.ok) {
    return outcome.error.code === 'CALLER_ERROR'
      ? { state: 'refused', error: outcome.error }
      : { state: 'unknown' };
  }
  return wellFormed(outcome.value);
}

function wellFormed(answer: unknown): CheckVerdict {
  if (answer === null || typeof answer !== 'object') return { state: 'unknown' };
  const state = (answer as { state?: unknown }).state;
  if (state === 'applied') return { state: 'applied', result: (answer as { result?: unknown }).result };
  if (state === 'not-applied') return { state: 'not-applied' };
  return { state: 'unknown' };
}

/**
 * Waits `ms` unless the caller gives up or the call's deadline would pass first. False when the wait
 * was cut short: then there is no time for what was to follow it.
 */
export async function pauseFor(state: CallState, deps: PipelineDeps, ms: number): Promise<boolean> {
  if (state.signal.aborted) return false;
  const deadline = state.ctx.deadlineMs;
  if (deadline !== undefined && deps.clock.now() + ms >= deadline) return false;
  try {
    await deps.clock.sleep(ms, state.signal);
    return true;
  } catch {
    return false;
  }
}
