import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { ToolDefinition, ToolInvocation } from '../registry/tool-definition.js';

/** What one attempt came to. `invoked` says whether the tool itself was called (the request may have left). */
export type AttemptOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: ToolgateError; readonly invoked: boolean };

/** What a piece of work run by {@link runGuarded} receives: its limits, for the tool's invocation. */
export interface AttemptLimits {
  readonly signal: AbortSignal;
  /** Throws when the attempt's time limit or the call's lease has run out (see `ToolInvocation`). */
  readonly assertLive: () => void;
  /** The earlier of the attempt's end and the lease's end; undefined when neither is finite. */
  readonly effectDeadlineMs: number | undefined;
}

/** The breaker (and outbound budget) group of a tool: its downstream, or the tool alone. */
export function breakerKey(tool: ToolDefinition): string {
  return tool.downstream ?? `tool:${tool.name}`;
}

/**
 * Runs `work` once under the call's limits: waits for an outbound token of the tool's downstream,
 * then runs through the downstream's breaker, all bounded by one signal (tool timeout, call
 * deadline, caller's signal) that the work receives and that also stops the wait for a work that
 * ignores it. Never throws.
 *
 * `invoked` is false when the request never left: the deadline or caller stopped it first, no
 * outbound token came in time (RATE_LIMITED), the limiter's store was down (DEPENDENCY_UNAVAILABLE)
 * or the breaker was open (BREAKER_OPEN). When the signal fired while the work was running, the error
 * is TIMEOUT: its outcome is unknown.
 */
export async function runGuarded(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  work: (limits: AttemptLimits) => Promise<unknown>,
  onInvoke?: () => void,
): Promise<AttemptOutcome> {
  const scope = attemptScope(state.signal, tool.timeoutMs, state.ctx.deadlineMs, deps.clock);
  const lease = state.leaseExpiresAtMs;
  const end = lease === undefined ? scope.endsAtMs : Math.min(scope.endsAtMs, lease);
  const limits: AttemptLimits = {
    signal: scope.signal,
    assertLive: () => {
      scope.assertLive();
      if (leaseRunOut(state, deps)) throw leaseLost();
    },
    effectDeadlineMs: Number.isFinite(end) ? end : undefined,
  };
  let invoked = false;
  try {
    if (tool.downstream !== undefined) {
      try {
        await deps.outbound.acquire(tool.downstream, scope.signal);
      } catch (err) {
        if (scope.cause() === undefined) return { ok: false, error: classify(err), invoked };
        return { ok: false, error: notSent(scope.cause() === 'caller' ? 'cancelled' : 'no-token'), invoked };
      }
    }
    if (scope.signal.aborted) {
      return { ok: false, error: notSent(scope.cause() === 'caller' ? 'cancelled' : 'deadline'), invoked };
    }
    // breakers.run calls the function synchronously when it lets the call through, so nothing can
    // abort between the check above and the invocation.
    const value = await deps.breakers.run(breakerKey(tool), () => {
      invoked = true;
      onInvoke?.();
      return raceAbort(
        Promise.resolve().then(() => work(limits)),
        scope.signal,
      );
    });
    return { ok: true, value };
  } catch (err) {
    if (invoked && scope.cause() === 'caller') {
      return {
        ok: false,
        error: new ToolgateError(
          'TIMEOUT',
          'The call was cancelled while it was running; its outcome is unknown.',
          {
            cause: err,
          },
        ),
        invoked,
      };
    }
    return { ok: false, error: classify(err, { nowMs: deps.clock.now() }), invoked };
  } finally {
    scope.dispose();
  }
}

/** The invocation a tool (or its status check) receives for attempt `attempt`. */
export function invocation(
  state: CallState,
  key: string,
  attempt: number,
  limits: AttemptLimits,
): ToolInvocation {
  const { signal, assertLive, effectDeadlineMs } = limits;
  return effectDeadlineMs === undefined
    ? { ctx: state.ctx, idempotencyKey: key, attempt, signal, assertLive }
    : { ctx: state.ctx, idempotencyKey: key, attempt, signal, assertLive, effectDeadlineMs };
}

/** Whether this executor's lease on the call has run out by its clock (no lease: never). */
export function leaseRunOut(state: CallState, deps: PipelineDeps): boolean {
  return state.leaseExpiresAtMs !== undefined && deps.clock.now() >= state.leaseExpiresAtMs;
}

function leaseLost(): ToolgateError {
  return new ToolgateError(
    'TIMEOUT',
    "This executor's lease on the call ran out (the process was paused or too slow); another executor may own the call now, so nothing more may be sent.",
  );
}

/**
 * Errors after which the effect definitely did not happen: the downstream refused or failed the
 * request and said so, or the request never left. Anything else from an invoked state-changing tool
 * (a timeout, a reset connection, an unclassifiable throw) leaves the outcome unknown.
 */
const DEFINITELY_NOT_APPLIED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CALLER_ERROR',
  'SERVER_ERROR',
  'RATE_LIMITED',
  'BREAKER_OPEN',
  'DEPENDENCY_UNAVAILABLE',
  'UNAUTHORIZED',
  'INVALID_PRINCIPAL',
  'POLICY_VIOLATION',
]);

/** Whether a failed attempt may nonetheless have applied the tool's effect. */
export function mayHaveApplied(
  tool: ToolDefinition,
  outcome: Extract<AttemptOutcome, { ok: false }>,
): boolean {
  return tool.stateChanging && outcome.invoked && !DEFINITELY_NOT_APPLIED.has(outcome.error.code);
}

/** The refusal for a request that never left: the caller gave up, the deadline passed, or no outbound token came. */
export function notSent(why: 'cancelled' | 'deadline' | 'no-token'): ToolgateError {
  switch (why) {
    case 'cancelled':
      return new ToolgateError('TIMEOUT', 'The call was cancelled before it was sent; it did not run.', {
        retryable: true,
      });
    case 'deadline':
      return new ToolgateError('TIMEOUT', "The call's deadline passed before it was sent; it did not run.", {
        retryable: true,
      });
    case 'no-token':
      return new ToolgateError(
        'RATE_LIMITED',
        "The downstream service's rate limit did not free up within the call's time budget; the call was not sent.",
        { retryable: true },
      );
  }
}
