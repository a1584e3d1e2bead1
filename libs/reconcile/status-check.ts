import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import { settleMsOf as settleRule } from '../execution/retry-policy.js';
import type { Clock } from '../core/clock.js';
import type { ReconciliationCase } from '../ports/case-store.js';
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

/** See `settleMsOf` in libs/execution/retry-policy.ts: one rule for the executor and the reconciler. */
export function settleMsOf(tool: Pick<ToolDefinition, 'retrySafety'>): number {
  return settleRule(tool.retrySafety);
}

/**
 * When the case's call ended, as the case knows it: the later of when the executor recorded its
 * UNRESOLVED result (the dead letter's time, `context.deadLetteredAtMs`) and when the case was
 * opened. Every send of the call had ended (answered or abandoned) by both. Pure.
 */
export function callEndedAtMs(c: Pick<ReconciliationCase, 'createdAtMs' | 'context'>): number {
  const recorded = c.context.deadLetteredAtMs;
  return typeof recorded === 'number' && Number.isFinite(recorded)
    ? Math.max(c.createdAtMs, recorded)
    : c.createdAtMs;
}

/**
 * Whether a "not-applied" answer may be acted on: only when the check that gave it STARTED at
 * least the tool's settle time ({@link settleMsOf}) after the call ended ({@link callEndedAtMs});
 * an earlier one counts as "unknown". With no settle time the check's own answer is authoritative.
 * `sinceEndMs` is how long after the call's end the check started. Pure.
 */
export function notAppliedTrust(
  tool: Pick<ToolDefinition, 'retrySafety'>,
  c: Pick<ReconciliationCase, 'createdAtMs' | 'context'>,
  checkStartedAtMs: number,
): { readonly trusted: boolean; readonly settleMs: number; readonly sinceEndMs: number } {
  const settleMs = settleMsOf(tool);
  const sinceEndMs = checkStartedAtMs - callEndedAtMs(c);
  return { trusted: settleMs === 0 || sinceEndMs >= settleMs, settleMs, sinceEndMs };
}
