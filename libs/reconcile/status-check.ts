import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import type { Clock } from '../core/clock.js';
import type { StatusCheckAnswer, ToolDefinition, ToolInvocation } from '../registry/tool-definition.js';

/** A status check's answer, and why it is `unknown` when it is. */
export interface CheckOutcome {
  readonly answer: StatusCheckAnswer;
  /** For `unknown`: what happened (timed out, threw, malformed answer, no check). */
  readonly detail?: string;
}

/**
 * Runs the tool's status check once with the call's validated arguments and an invocation
 * carrying the call's ORIGINAL idempotency key, under a timeout (`timeoutMs`, also aborted with
 * `signal`). Never throws: a tool without a check, a check that throws, times out or answers
 * something malformed gives `unknown` with the reason. A check that ignores its signal is abandoned
 * at the timeout.
 */
export async function runStatusCheck(
  tool: ToolDefinition,
  args: unknown,
  invocation: Omit<ToolInvocation, 'signal' | 'assertLive'>,
  opts: { readonly timeoutMs: number; readonly clock: Clock; readonly signal: AbortSignal },
): Promise<CheckOutcome> {
  const safety = tool.retrySafety;
  if (safety.kind !== 'status-check') {
    return { answer: { state: 'unknown' }, detail: `the tool has no status check (${safety.kind})` };
  }
  const scope = attemptScope(opts.signal, opts.timeoutMs, undefined, opts.clock);
  try {
    const answer = await raceAbort(
      Promise.resolve().then(() =>
        safety.check(args, {
          ...invocation,
          signal: scope.signal,
          assertLive: () => scope.assertLive(),
        }),
      ),
      scope.signal,
    );
    return wellFormed(answer);
  } catch (err) {
    const cause = scope.cause();
    const detail =
      cause === 'timeout'
        ? `the check timed out after ${opts.timeoutMs} ms`
        : cause === 'caller'
          ? 'the check was stopped'
          : `the check failed: ${err instanceof Error ? err.message : String(err)}`;
    return { answer: { state: 'unknown' }, detail };
  } finally {
    scope.dispose();
  }
}

function wellFormed(answer: unknown): CheckOutcome {
  const state = (answer as { state?: unknown } | null)?.state;
  if (state === 'applied') return { answer: { state, result: (answer as { result?: unknown }).result } };
  if (state === 'not-applied') return { answer: { state } };
  if (state === 'unknown') return { answer: { state }, detail: 'the downstream does not know yet' };
  return { answer: { state: 'unknown' }, detail: 'the check gave a malformed answer' };
}
