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
  work: (signal: AbortSignal, assertLive: () => void) => Promise<unknown>,
  onInvoke?: () => void,
): Promise<AttemptOutcome> {
  const scope = attemptScope(state.signal, tool.timeoutMs, state.ctx.deadlineMs, deps.clock);
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
        Promise.resolve().then(() => work(scope.signal, () => scope.assertLive())),
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
  signal: AbortSignal,
  assertLive: () => void,
): ToolInvocation {
  return { ctx: state.ctx, idempotencyKey: key, attempt, signal, assertLive };
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

function notSent(why: 'cancelled' | 'deadline' | 'no-token'): ToolgateError {
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
