import { describe, expect, it } from 'vitest';
import { buildAuditRecord, REDACTED, redactArguments } from '../../../libs/pipeline/build-audit-record.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import { call, context, countingRefundTool } from './fixtures.js';

describe('redactArguments', () => {
  it('keeps allow-listed fields verbatim and redacts every other value', () => {
    expect(
      redactArguments({ order_id: 'O-1', amount: 5, card: '4111', note: { x: 1 } }, ['order_id', 'amount']),
    ).toEqual({
      order_id: 'O-1',
      amount: 5,
      card: REDACTED,
      note: REDACTED,
    });
  });

  it('redacts everything without an allow-list', () => {
    expect(redactArguments({ a: 1, b: 'secret' }, undefined)).toEqual({ a: REDACTED, b: REDACTED });
  });

  it('keeps a "__proto__" argument an ordinary, redacted field', () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const out = redactArguments(args, ['a']);
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe(REDACTED);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('yields {} for non-objects', () => {
    expect(redactArguments(null, ['a'])).toEqual({});
    expect(redactArguments([1, 2], ['0'])).toEqual({});
  });
});

describe('buildAuditRecord', () => {
  const { tool } = countingRefundTool();
  const base = (): CallState => ({
    call: call({ order_id: 'O-1', amount: 5, reason: 'customer said the password is hunter2' }),
    ctx: context({ step: 3, index: 1 }),
    signal: new AbortController().signal,
    tool: tool as unknown as CallState['tool'],
    toolInvocations: 1,
    attempts: [{ attempt: 1, startedAtMs: 10, durationMs: 5, result: 'ok' }],
    rawOutput: { refund_id: 'R-1', amount: 5, internal_ledger_row: 991 },
    output: { refund_id: 'R-1', amount: 5 },
    idempotencyKey: 'tg1:abc',
    resourceKey: 't1:order:O-1',
  });

  it('records who, what (allow-listed), every decision and only the validated output', () => {
    const decisions = [{ stage: 'resolve' as const, decision: 'pass' as const, durationMs: 0 }];
    const state = base();
    const record = buildAuditRecord({
      policyVersion: 'v-test',
      state,
      outcome: 'SUCCESS',
      decisions,
      startedAtMs: 100,
      finishedAtMs: 120,
    });
    expect(record).toEqual({
      callId: state.call.id,
      tool: 'issue_refund',
      toolVersion: '1.0.0',
      principalId: 'agent-7',
      tenant: 't1',
      taskId: 'task-1',
      step: 3,
      index: 1,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      idempotencyKey: 'tg1:abc',
      resourceKey: 't1:order:O-1',
      arguments: { order_id: 'O-1', amount: 5, reason: REDACTED },
      result: { refund_id: 'R-1', amount: 5 },
      outcome: 'SUCCESS',
      decisions,
      attempts: [{ attempt: 1, startedAtMs: 10, durationMs: 5, result: 'ok' }],
      startedAtMs: 100,
      finishedAtMs: 120,
      policy: { version: 'v-test' },
    });
    expect(JSON.stringify(record)).not.toContain('hunter2');
    expect(JSON.stringify(record)).not.toContain('internal_ledger_row');
  });

  it('never records raw output when output validation did not pass', () => {
    const state = base();
    delete state.output;
    const record = buildAuditRecord({
      policyVersion: 'v-test',
      state,
      outcome: 'EXECUTION_ERROR',
      errorCode: 'BAD_OUTPUT',
      decisions: [],
      startedAtMs: 0,
      finishedAtMs: 0,
    });
    expect(record.result).toBeUndefined();
    expect(record.errorCode).toBe('BAD_OUTPUT');
  });

  it('records a duplicate with the stored (already redacted) result', () => {
    const state = base();
    delete state.output;
    const record = buildAuditRecord({
      policyVersion: 'v-test',
      state,
      outcome: 'DUPLICATE',
      finishPayload: { refund_id: 'R-0' },
      decisions: [],
      startedAtMs: 0,
      finishedAtMs: 0,
    });
    expect(record.result).toEqual({ refund_id: 'R-0' });
  });
});

describe('buildAuditRecord on refused input', () => {
  it('redacts allow-listed fields too when validation refused the arguments', () => {
    const { tool } = countingRefundTool();
    const record = buildAuditRecord({
      policyVersion: 'v-test',
      state: {
        call: call({ order_id: 'Bearer sk_live_0123456789abcdef', amount: 5 }),
        ctx: context({ step: 1, index: 0 }),
        signal: new AbortController().signal,
        tool: tool as unknown as CallState['tool'],
        toolInvocations: 0,
        attempts: [],
      },
      outcome: 'SCHEMA_INVALID',
      errorCode: 'SCHEMA_INVALID',
      decisions: [
        { stage: 'resolve', decision: 'pass', durationMs: 0 },
        { stage: 'validate-input', decision: 'refuse', durationMs: 0 },
      ],
      startedAtMs: 1,
      finishedAtMs: 2,
    });
    expect(record.arguments).toEqual({ order_id: REDACTED, amount: REDACTED });
  });
});
