import { describe, expect, it } from 'vitest';
import type { ToolCallResultEvent } from '../../../libs/events/contracts.js';
import {
  ResultInbox,
  type PublishedCall,
  type ToolCallResolution,
} from '../../../services/sdk/result-inbox.js';

const call = (n: number): PublishedCall => ({
  callId: `call-${n}`,
  providerCallId: `prov-${n}`,
  tool: 'issue_refund',
  tenant: 't1',
  taskId: 'task',
  idempotencyKey: `tg1:${n}`,
});

const result = (
  n: number,
  outcome: ToolCallResultEvent['outcome'],
  extra: Partial<ToolCallResultEvent> = {},
): ToolCallResultEvent => ({
  callId: `call-${n}`,
  providerCallId: `prov-${n}`,
  tool: 'issue_refund',
  tenant: 't1',
  taskId: 'task',
  outcome,
  payloadJson: null,
  error: null,
  idempotencyKey: `tg1:${n}`,
  toolInvocations: 1,
  source: 'executor',
  producerId: 'x',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  tokensIn: 0,
  tokensOut: 0,
  completedAtMs: 1,
  ...extra,
});

function inbox(maxUnresolved = 10): {
  inbox: ResultInbox;
  resolutions: ToolCallResolution[];
  forgotten: string[];
} {
  const resolutions: ToolCallResolution[] = [];
  const forgotten: string[] = [];
  return {
    inbox: new ResultInbox({
      maxUnresolved,
      onResolution: (r) => resolutions.push(r),
      onForget: (c) => forgotten.push(c.callId),
    }),
    resolutions,
    forgotten,
  };
}

describe('ResultInbox', () => {
  it('completes a turn once every call has a result; the first result of a call wins', async () => {
    const { inbox: box } = inbox();
    const wait = box.expect([call(1), call(2)]);
    let complete = false;
    void wait.complete.then(() => (complete = true));
    expect(box.deliver(result(1, 'SUCCESS', { payloadJson: '1' }))).toBe('accepted');
    expect(box.deliver(result(1, 'EXECUTION_ERROR'))).toBe('duplicate');
    await Promise.resolve();
    expect(complete).toBe(false);
    expect(box.deliver(result(2, 'UNRESOLVED'))).toBe('accepted');
    await wait.complete;
    const events = wait.close();
    expect([...events.values()].map((e) => [e.callId, e.outcome, e.payloadJson])).toEqual([
      ['call-1', 'SUCCESS', '1'],
      ['call-2', 'UNRESOLVED', null],
    ]);
    expect(box.awaitedCount()).toBe(0);
  });

  it('stops waiting for withdrawn calls (never published): the turn completes without them, and they are not remembered', async () => {
    const { inbox: box, resolutions } = inbox();
    const wait = box.expect([call(1), call(2)]);
    expect(box.deliver(result(1, 'SUCCESS'))).toBe('accepted');
    wait.withdraw([call(2).callId, 'not-awaited']);
    await wait.complete;
    expect([...wait.close().keys()]).toEqual(['call-1']);
    expect(box.awaitedCount()).toBe(0);
    expect(box.deliver(result(2, 'SUCCESS'))).toBe('unmatched');
    expect(resolutions).toEqual([]);
  });

  it('lets a definite result supersede UNRESOLVED, but not the other way round', () => {
    const { inbox: box } = inbox();
    const wait = box.expect([call(1), call(2)]);
    box.deliver(result(1, 'UNRESOLVED'));
    expect(box.deliver(result(1, 'SUCCESS', { source: 'reconciler' }))).toBe('superseded');
    expect(box.deliver(result(1, 'UNRESOLVED'))).toBe('duplicate');
    box.deliver(result(2, 'POLICY_VIOLATION'));
    expect(box.deliver(result(2, 'SUCCESS'))).toBe('duplicate');
    expect([...wait.close().values()].map((e) => e.outcome)).toEqual(['SUCCESS', 'POLICY_VIOLATION']);
  });

  it('after the turn, a definite result for a call left unanswered or UNRESOLVED is a resolution, once', () => {
    const { inbox: box, resolutions } = inbox();
    const wait = box.expect([call(1), call(2), call(3)]);
    box.deliver(result(2, 'UNRESOLVED'));
    box.deliver(result(3, 'SUCCESS'));
    wait.close();
    expect(box.unresolvedCount()).toBe(2);
    expect(box.deliver(result(3, 'SUCCESS'))).toBe('unmatched'); // settled definitively: nothing to tell
    expect(box.deliver(result(1, 'UNRESOLVED'))).toBe('duplicate');
    expect(box.deliver(result(1, 'SUCCESS', { payloadJson: '{"a":1}' }))).toBe('resolution');
    expect(box.deliver(result(1, 'SUCCESS'))).toBe('unmatched');
    expect(box.deliver(result(2, 'EXECUTION_ERROR', { source: 'operator' }))).toBe('resolution');
    expect(box.deliver(result(9, 'SUCCESS'))).toBe('unmatched');
    expect(resolutions.map((r) => [r.call.callId, r.result.callId, r.result.outcome, r.source])).toEqual([
      ['call-1', 'prov-1', 'SUCCESS', 'executor'],
      ['call-2', 'prov-2', 'EXECUTION_ERROR', 'operator'],
    ]);
    expect(resolutions[0]!.result.payload).toEqual({ a: 1 });
    expect(box.unresolvedCount()).toBe(0);
  });

  it('remembers at most maxUnresolved calls, forgetting the oldest', () => {
    const { inbox: box, resolutions, forgotten } = inbox(2);
    box.expect([call(1), call(2), call(3)]).close();
    expect(forgotten).toEqual(['call-1']);
    expect(box.deliver(result(1, 'SUCCESS'))).toBe('unmatched');
    expect(box.deliver(result(3, 'SUCCESS'))).toBe('resolution');
    expect(resolutions).toHaveLength(1);
  });

  it('completes an empty turn at once, refuses a call id awaited twice, and closes idempotently', async () => {
    const { inbox: box } = inbox();
    await box.expect([]).complete;
    const wait = box.expect([call(1)]);
    expect(() => box.expect([call(1)])).toThrow(/awaited twice/);
    box.deliver(result(1, 'SUCCESS'));
    const first = wait.close();
    expect(wait.close()).toBe(first);
  });
});
