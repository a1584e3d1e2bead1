import { describe, expect, it } from 'vitest';
import { callerError, outcomeUnknown, serverError } from '../../../libs/core/tool-failure.js';
import type { StatusCheckAnswer, ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { makeDeps, makeState, makeTool, runTail } from './stage-harness.js';

/** A tool body that throws `errors` in turn (the last repeats) and counts its invocations. */
function throwing(errors: readonly Error[]) {
  const attempts: number[] = [];
  const execute = (_args: unknown, inv: ToolInvocation): Promise<never> => {
    attempts.push(inv.attempt);
    return Promise.reject(errors[Math.min(attempts.length, errors.length) - 1]!);
  };
  return { attempts, execute };
}

/** A status check that answers `answers` in turn (the last repeats) and counts its calls. */
function checking(answers: readonly StatusCheckAnswer[]) {
  let calls = 0;
  const check = (): Promise<StatusCheckAnswer> => {
    calls += 1;
    return Promise.resolve(answers[Math.min(calls, answers.length) - 1]!);
  };
  return { check, calls: () => calls };
}

describe('execute stage: what each tool-failure error leads to', () => {
  it('serverError with retryable: false is not retried, though the policy allows three attempts', async () => {
    for (const stateChanging of [true, false]) {
      const tool = throwing([serverError('The ledger is closed for the year.', { retryable: false })]);
      const state = makeState(
        makeTool({
          execute: tool.execute,
          stateChanging,
          retrySafety: stateChanging ? { kind: 'forwards-key' } : { kind: 'read-only' },
        }),
      );
      const ran = await runTail(state, makeDeps());
      expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR', retryable: false } });
      expect(tool.attempts).toEqual([1]);
    }
  });

  it('a retryable serverError is retried up to the policy (three attempts)', async () => {
    const tool = throwing([serverError('The ledger is briefly unavailable.')]);
    const state = makeState(makeTool({ execute: tool.execute, retrySafety: { kind: 'forwards-key' } }));
    const ran = await runTail(state, makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR' } });
    expect(tool.attempts).toEqual([1, 2, 3]);
  });

  it('status-check tool: outcomeUnknown asks the check before the retry; not applied → runs again', async () => {
    const tool = throwing([outcomeUnknown('The answer was lost.'), callerError('No such order.')]);
    const status = checking([{ state: 'not-applied' }]);
    const state = makeState(
      makeTool({ execute: tool.execute, retrySafety: { kind: 'status-check', check: status.check } }),
    );
    const ran = await runTail(state, makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'CALLER_ERROR' } });
    expect(tool.attempts).toEqual([1, 2]);
    // Before the first send, and after the unanswered one.
    expect(status.calls()).toBe(2);
  });

  it('status-check tool: outcomeUnknown, then the check finds the effect → SUCCESS without running again', async () => {
    const tool = throwing([outcomeUnknown('The answer was lost.')]);
    const status = checking([
      { state: 'not-applied' },
      { state: 'applied', result: { orderId: 'O-5512', status: 'refunded' } },
    ]);
    const state = makeState(
      makeTool({ execute: tool.execute, retrySafety: { kind: 'status-check', check: status.check } }),
    );
    const ran = await runTail(state, makeDeps());
    expect(ran.endedAt).toBe('all');
    expect(ran.state.output).toEqual({ orderId: 'O-5512', status: 'refunded' });
    expect(tool.attempts).toEqual([1]);
  });

  it('status-check tool: a plain Error is checked, not retried; unknown → UNRESOLVED', async () => {
    const tool = throwing([new Error('ticket not found')]);
    const status = checking([{ state: 'not-applied' }, { state: 'unknown' }]);
    const state = makeState(
      makeTool({
        execute: tool.execute,
        timeoutMs: 20,
        retrySafety: { kind: 'status-check', check: status.check },
      }),
    );
    const ran = await runTail(state, makeDeps());
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect(tool.attempts).toEqual([1]);
    expect(status.calls()).toBeGreaterThanOrEqual(2);
  });
});
