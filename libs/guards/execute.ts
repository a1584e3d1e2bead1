import { ToolgateError } from '../core/errors.js';
import { backoffDelayMs, isTransientKind, isRetrySafe, maxAttempts } from '../execution/retry-policy.js';
import type { RandomSource } from '../execution/retry-policy.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { GuardStage, StageResult } from '../pipeline/stage.js';
import type { StatusCheckSafety, ToolDefinition } from '../registry/tool-definition.js';
import { invocation, leaseRunOut, mayHaveApplied, notSent, runGuarded } from './run-attempt.js';
import type { AttemptOutcome } from './run-attempt.js';
import { pauseFor, settle } from './safe-path.js';

export interface ExecuteStageOptions {
  /** Jitter source for retry backoff. Default `Math.random`. */
  readonly random?: RandomSource;
}

/**
 * Builds stage 6: run the tool, at most as often as is safe.
 *
 * Per attempt: an outbound token for the tool's downstream, the downstream's breaker, and one abort
 * signal for the tool timeout, the call deadline and the caller (see `runGuarded`). Every invocation
 * is counted in `state.toolInvocations` and recorded in `state.attempts`, always with the same
 * idempotency key.
 *
 * Retries happen only for transient failures — TIMEOUT and SERVER_ERROR not marked `retryable: false` (a tool's
 * `serverError(..., { retryable: false })`: trying again will not help), only while attempts and
 * time remain, and only when repeating cannot duplicate the effect: read-only and forwards-key tools
 * retry; `none` never retries; status-check tools follow their own protocol ({@link runStatusChecked}).
 *
 * Endings, each stating what it knows of the effect in `state.effect` (by which the idempotency
 * layer around this stage settles the claim):
 * - success: `state.rawOutput` is set, effect `applied`, continue (output validation is next);
 * - the effect definitely did not happen: effect `absent`, refuse with the last error;
 * - the effect may have happened (timeout, lost connection, unclassifiable throw on a state-changing
 *   tool): finish UNRESOLVED ("outcome unknown; will be reconciled"), so duplicates never re-run it.
 *   Never reported as EXECUTION_ERROR.
 * - taken over from a dead owner: read-only/forwards-key run (the downstream dedupes on the key);
 *   none → UNRESOLVED without running.
 */
export function createExecuteStage(options: ExecuteStageOptions = {}): GuardStage {
  const random = options.random ?? Math.random;
  return async (state, deps) => {
    const tool = state.tool;
    const key = state.idempotencyKey;
    if (tool === undefined || key === undefined) {
      return {
        kind: 'refuse',
        error: new ToolgateError('INTERNAL', 'The tool was to run before it was resolved and claimed.'),
      };
    }
    const safety = tool.retrySafety;
    if (safety.kind === 'status-check') return runStatusChecked(state, deps, tool, safety, key, random);
    if (state.takenOver === true && tool.stateChanging && safety.kind === 'none') {
      return unresolved('a previous executor stopped mid-call and the tool has no safe way to retry');
    }

    const attempts = maxAttempts(tool.retry);
    let maybeApplied = false;
    let last: Extract<AttemptOutcome, { ok: false }> | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1 && !(await pauseFor(state, deps, backoffDelayMs(tool.retry, attempt - 1, random)))) {
        break;
      }
      const outcome = await runOnce(state, deps, tool, key, attempt);
      if (outcome.ok) return applied(state, outcome.value);
      last = outcome;
      if (mayHaveApplied(tool, outcome)) maybeApplied = true;
      if (!isTransient(outcome.error) || !isRetrySafe(tool.retrySafety)) break;
    }
    // The loop runs at least once, so `last` is set whenever we get here.
    const error = last!.error;
    if (!maybeApplied) return absent(state, error);
    return unresolved(`outcome unknown after ${error.code}; will be reconciled`);
  };
}

/**
 * The status-check protocol, run by the executor so that no tool has to remember its part:
 *
 * 1. Check first ({@link settle}): applied → done with the result the check found (nothing sent);
 *    the check refuses → refused, nothing sent; unknown → UNRESOLVED when a send of this call may
 *    exist (taken over from a stopped executor), else refused SERVER_ERROR "nothing was sent".
 * 2. Fence: the lease must still be this executor's by its clock (`state.leaseExpiresAtMs`), and
 *    `apply` is called in the same turn, with `inv.effectDeadlineMs` no later than the lease's end.
 *    A lease run out → UNRESOLVED, nothing sent (another executor may own the call now).
 * 3. Apply once. Answered → done. Refused or never sent (a definite failure) → refused, or after a
 *    backoff tried again while attempts remain and the failure is transient.
 * 4. Outcome unknown → check until decisive, trusting "not applied" only `settleMs` after the send
 *    ended: applied → done; not applied → back to 2 while attempts remain, else the honest failure;
 *    still unknown → UNRESOLVED for the reconciler, which runs the same check later.
 *
 * A call is never reported failed while a send of it may still land, and never sent again on a guess.
 */
async function runStatusChecked(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  safety: StatusCheckSafety<unknown>,
  key: string,
  random: RandomSource,
): Promise<StageResult> {
  // A previous owner's sends were fenced by its lease, which ran out before our claim: they ended
  // by now at the latest.
  let sendEndedAtMs = state.takenOver === true ? deps.clock.now() : undefined;
  const first = await settle(state, deps, tool, safety, key, sendEndedAtMs, 0);
  if (first.state === 'applied') return appliedByCheck(state, first.result, 'before sending');
  if (first.state === 'refused' && sendEndedAtMs === undefined) return absent(state, first.error);
  if (first.state !== 'not-applied') {
    if (sendEndedAtMs !== undefined) {
      return unresolved('a previous executor stopped mid-call and the status check could not tell');
    }
    return absent(state, outOfTime(state, deps) ?? uncheckable());
  }

  const attempts = maxAttempts(tool.retry);
  let error: ToolgateError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1 && sendEndedAtMs === undefined) {
      // The previous attempt definitely failed: wait out the backoff before trying again.
      if (!(await pauseFor(state, deps, backoffDelayMs(tool.retry, attempt - 1, random)))) break;
    }
    if (leaseRunOut(state, deps)) {
      return unresolved("this executor's lease ran out before the effect was sent; nothing more is sent");
    }
    const outcome = await runOnce(state, deps, tool, key, attempt);
    if (outcome.ok) return applied(state, outcome.value);
    error = outcome.error;
    if (!mayHaveApplied(tool, outcome)) {
      sendEndedAtMs = undefined;
      if (!isTransient(outcome.error)) break;
      continue;
    }
    sendEndedAtMs = deps.clock.now();
    const after = await settle(state, deps, tool, safety, key, sendEndedAtMs, attempt);
    if (after.state === 'applied') return appliedByCheck(state, after.result, 'after an unanswered send');
    if (after.state !== 'not-applied') {
      return unresolved(`outcome unknown after ${outcome.error.code}; will be reconciled`);
    }
    // Decisively not applied: nothing of this call can land any more.
    sendEndedAtMs = undefined;
    error = new ToolgateError(
      'SERVER_ERROR',
      'The service did not apply the request (its status check confirmed it after the answer was lost); nothing was done. Try again later.',
      { retryable: true, cause: outcome.error },
    );
  }
  // Every send of this call is decided not applied (or was never sent). The loop ran at least once,
  // so `error` is set.
  return absent(state, error!);
}

/**
 * Whether this failure is transient, so the executor may try again: a transient kind the tool did
 * not mark final (`serverError(…, { retryable: false })`).
 */
function isTransient(error: ToolgateError): boolean {
  return isTransientKind(error.code) && error.retryable;
}

/** Stage 6 with the default jitter source. */
export const executeStage: GuardStage = createExecuteStage();

/** One invocation of the tool, recorded as an attempt. */
async function runOnce(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  key: string,
  attempt: number,
): Promise<AttemptOutcome> {
  let startedAtMs = deps.clock.now();
  const outcome = await runGuarded(
    state,
    deps,
    tool,
    (limits) => tool.execute(state.args, invocation(state, key, attempt, limits)),
    () => {
      state.toolInvocations += 1;
      startedAtMs = deps.clock.now();
    },
  );
  if (outcome.ok || outcome.invoked) {
    const durationMs = Math.max(0, deps.clock.now() - startedAtMs);
    const result = outcome.ok ? 'ok' : outcome.error.code;
    state.attempts.push({ attempt, startedAtMs, durationMs, result });
    try {
      deps.observer?.onAttempt?.(tool.name, attempt, result, durationMs);
    } catch {
      // Observers must never change a decision.
    }
  }
  return outcome;
}

/** The check before sending could not tell: nothing was sent. */
function uncheckable(): ToolgateError {
  return new ToolgateError(
    'SERVER_ERROR',
    'The service could not be asked whether this was already done, so nothing was sent. Try again later.',
    { retryable: true },
  );
}

/** Why nothing could be sent when the caller gave up or the call's deadline passed; else undefined. */
function outOfTime(state: CallState, deps: PipelineDeps): ToolgateError | undefined {
  if (state.signal.aborted) return notSent('cancelled');
  const deadline = state.ctx.deadlineMs;
  return deadline !== undefined && deps.clock.now() >= deadline ? notSent('deadline') : undefined;
}

/** The tool answered: continue with its output (output validation is next). */
function applied(state: CallState, output: unknown): StageResult {
  state.rawOutput = output;
  state.effect = 'applied';
  return { kind: 'continue' };
}

/**
 * The effect exists (a status check said so): continue as if the tool had answered with the
 * check's result, which output validation then checks and redacts like any output.
 */
function appliedByCheck(state: CallState, result: unknown, when: string): StageResult {
  state.rawOutput = result;
  state.effect = 'applied';
  return {
    kind: 'continue',
    reason: `the effect was already applied (confirmed by a status check ${when}); not run again`,
  };
}

/** The effect definitely did not happen: refuse with `error`, so the claim is given back. */
function absent(state: CallState, error: ToolgateError): StageResult {
  state.effect = 'absent';
  return { kind: 'refuse', error };
}

function unresolved(reason: string): StageResult {
  const error = new ToolgateError(
    'UNRESOLVED',
    'The outcome of this action is unknown; it will be reconciled. Do not repeat it; tell the user it is being checked.',
    { retryable: false },
  );
  return { kind: 'finish', outcome: 'UNRESOLVED', error, reason };
}
