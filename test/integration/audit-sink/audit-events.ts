import type { AuditRecordEvent } from '../../../libs/events/contracts.js';

/** When the first fixture record started (epoch ms). */
export const T0 = 1_800_000_000_000;

/**
 * An audit event as the executor publishes it: record `n` of a task, SUCCESS (with a result) when
 * `n` is even, else refused by a business rule.
 */
export function auditEvent(recordId: string, tenant: string, n: number): AuditRecordEvent {
  return {
    recordId,
    callId: `call-${recordId}`,
    tool: 'issue_refund',
    toolVersion: '1.0.0',
    principalId: 'u-42',
    tenant,
    taskId: 'task-1',
    step: n,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    idempotencyKey: `tg1:${recordId}`,
    resourceKey: `${tenant}:order:O-${n}`,
    argumentsJson: JSON.stringify({ order_id: `O-${n}`, amount: 10 + n, note: '[redacted]' }),
    resultJson: n % 2 === 0 ? JSON.stringify({ refundId: `R-${n}` }) : null,
    outcome: n % 2 === 0 ? 'SUCCESS' : 'POLICY_VIOLATION',
    errorCode: n % 2 === 0 ? null : 'POLICY_VIOLATION',
    decisions: [
      { stage: 'resolve', decision: 'pass', reason: null, code: null, durationMs: 0.1 },
      n % 2 === 0
        ? { stage: 'execute', decision: 'pass', reason: null, code: null, durationMs: 12.5 }
        : {
            stage: 'business-rules',
            decision: 'refuse',
            reason: 'over $50',
            code: 'POLICY_VIOLATION',
            durationMs: 0.2,
          },
    ],
    attempts: n % 2 === 0 ? [{ attempt: 1, startedAtMs: T0 + n, durationMs: 12.5, result: 'ok' }] : [],
    source: 'executor',
    producerId: 'executor-1',
    startedAtMs: T0 + n,
    finishedAtMs: T0 + n + 13,
  };
}
