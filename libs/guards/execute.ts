import { ToolgateError } from '../core/errors.js';
import { backoffDelayMs, isTransientKind, isRetrySafe, maxAttempts } from '../execution/retry-policy.js';
import type { RandomSource } from '../execution/retry-policy.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { GuardStage, StageResult } from '../pipeline/stage.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { invocation, mayHaveApplied, runGuarded } from './run-attempt.js';
import type { AttemptOutcome } from './run-attempt.js';
import { checkStatus } from './safe-path.js';

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
 * retry; status-check tools retry after a check says the effect is absent; `none` never retries.
 *
 * Endings, each stating what it knows of the effect in `state.effect` (by which the idempotency
 * layer around this stage settles the claim):
 * - success: `state.rawOutput` is set, effect `applied`, continue (output validation is next);
 * - the effect definitely did not happen: effect `absent`, refuse with the last error;
 * - the effect may have happened (timeout, lost connection, unclassifiable throw on a state-changing
 *   tool): a status-check tool is checked once more — applied continues like a success with the
 *   result the check found, absent refuses — otherwise finish UNRESOLVED ("outcome unknown; will be
 *   reconciled"), so duplicates never re-run it. Never reported as EXECUTION_ERROR.
 * - taken over from a dead owner: read-only/forwards-key run (the downstream dedupes on the key);
 *   status-check checks first (applied → continue with that result, absent → run, unknown →
 *   UNRESOLVED); none → UNRESOLVED without running.
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
    const safety = tool.retrySafety.kind;
    // The effect may already exist: set by an attempt of ours, or by a previous owner we took over from.
    let maybeApplied = state.takenOver === true && tool.stateChanging;

    if (maybeApplied) {
      if (safety === 'none') {
        return unresolved('a previous executor stopped mid-call and the tool has no safe way to retry');
      }
      if (safety === 'status-check') {
        const answer = await checkStatus(state, deps, tool, key, 1);
        if (answer.state === 'applied') return appliedByCheck(state, answer.result);
        if (answer.state === 'unknown') {
          return unresolved('a previous executor stopped mid-call and the status check could not tell');
        }
        maybeApplied = false;
      }
    }

    const attempts = maxAttempts(tool.retry);
    let last: Extract<AttemptOutcome, { ok: false }> | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) {
        const delay = backoffDelayMs(tool.retry, attempt - 1, random);
        if (!(await pause(state, deps, delay))) break;
        if (maybeApplied && safety === 'status-check') {
          const answer = await checkStatus(state, deps, tool, key, attempt);
          if (answer.state === 'applied') return appliedByCheck(state, answer.result);
          if (answer.state === 'unknown') {
            return unresolved('an attempt may have applied the effect and the status check could not tell');
          }
          maybeApplied = false;
        }
      }
      const outcome = await runOnce(state, deps, tool, key, attempt);
      if (outcome.ok) {
        state.rawOutput = outcome.value;
        state.effect = 'applied';
        return { kind: 'continue' };
      }
      last = outcome;
      if (mayHaveApplied(tool, outcome)) maybeApplied = true;
      if (!isTransient(outcome.error) || !isRetrySafe(tool.retrySafety)) break;
    }
    // The loop runs at least once, so `last` is set whenever we get here.
    const error = last!.error;

    if (!maybeApplied) return absent(state, error);
    if (safety === 'status-check') {
      const answer = await checkStatus(state, deps, tool, key, state.attempts.length + 1);
      if (answer.state === 'applied') return appliedByCheck(state, answer.result);
      if (answer.state === 'not-applied') return absent(state, error);
    }
    return unresolved(`outcome unknown after ${error.code}; will be reconciled`);
  };
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
    (signal, assertLive) => tool.execute(state.args, invocation(state, key, attempt, signal, assertLive)),
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

/**
 * Waits out the backoff before a retry. False when the caller gave up or the wait would run past the
 * deadline: then there is no time for another attempt.
 */
async function pause(state: CallState, deps: PipelineDeps, delayMs: number): Promise<boolean> {
  if (state.signal.aborted) return false;
  const deadline = state.ctx.deadlineMs;
  if (deadline !== undefined && deps.clock.now() + delayMs >= deadline) return false;
  try {
    await deps.clock.sleep(delayMs, state.signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The effect exists (a status check said so): continue as if the tool had answered with the
 * check's result, which output validation then checks and redacts like any output.
 */
function appliedByCheck(state: CallState, result: unknown): StageResult {
  state.rawOutput = result;
  state.effect = 'applied';
  return {
    kind: 'continue',
    reason: 'the effect was already applied (confirmed by a status check); not run again',
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
