import type { Outcome } from '../../../libs/core/outcome.js';
import type { AuditRecord } from '../../../libs/core/audit-record.js';
import type { AuditEnvelope } from '../../../libs/ports/audit-store.js';
import type { DeadLetterInput } from '../../../libs/ports/case-store.js';

let counter = 0;

/** An audit record of one refund attempt; override anything. */
export function auditRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  counter += 1;
  const outcome: Outcome = overrides.outcome ?? 'SUCCESS';
  return {
    callId: `call-${counter}`,
    tool: 'refund_payment',
    toolVersion: '1.0.0',
    principalId: 'user-7',
    tenant: 't1',
    taskId: 'task-1',
    step: 1,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    idempotencyKey: `idem-${counter}`,
    resourceKey: 't1:order:O-5512',
    arguments: { order_id: 'O-5512', amount_cents: 1200, note: '[redacted]' },
    outcome,
    decisions: [
      { stage: 'resolve', decision: 'pass', durationMs: 0.1 },
      { stage: 'validate-input', decision: 'pass', durationMs: 0.2 },
      { stage: 'authorize', decision: 'pass', durationMs: 0.1 },
    ],
    attempts: [{ attempt: 1, startedAtMs: 1_000, durationMs: 12.5, result: 'ok' }],
    startedAtMs: 1_000,
    finishedAtMs: 1_020,
    ...overrides,
  };
}

/** A refusal at the authorization stage (never reaches the tool). */
export function refusedRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return auditRecord({
    outcome: 'UNAUTHORIZED',
    errorCode: 'UNAUTHORIZED',
    principalId: 'user-9',
    decisions: [
      { stage: 'resolve', decision: 'pass', durationMs: 0.1 },
      { stage: 'validate-input', decision: 'pass', durationMs: 0.2 },
      {
        stage: 'authorize',
        decision: 'refuse',
        reason: 'not permitted',
        code: 'UNAUTHORIZED',
        durationMs: 0.1,
      },
    ],
    attempts: [],
    ...overrides,
  });
}

/**
 * A refusal by the business rules, whose single decision refuses with `reason` (the outcome and
 * error code are POLICY_VIOLATION); override anything else.
 */
export function policyRefusedRecord(reason: string, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return refusedRecord({
    outcome: 'POLICY_VIOLATION',
    errorCode: 'POLICY_VIOLATION',
    decisions: [{ stage: 'business-rules', decision: 'refuse', reason, durationMs: 0.1 }],
    ...overrides,
  });
}

/** An envelope around `record` with a fresh recordId. */
export function envelope(record: AuditRecord, overrides: Partial<AuditEnvelope> = {}): AuditEnvelope {
  counter += 1;
  return {
    recordId: `${record.callId}:attempt-${counter}`,
    producerId: 'executor-a',
    source: 'executor',
    recordedAtMs: record.finishedAtMs,
    record,
    ...overrides,
  };
}

/** A dead letter for an UNRESOLVED refund; override anything. */
export function deadLetter(overrides: Partial<DeadLetterInput> = {}): DeadLetterInput {
  counter += 1;
  return {
    deadLetterId: `dl-${counter}`,
    reason: 'UNRESOLVED',
    callId: `call-dl-${counter}`,
    tenant: 't1',
    tool: 'refund_payment',
    idempotencyKey: `idem-dl-${counter}`,
    resourceKey: 't1:order:O-5512',
    principalId: 'user-7',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    requestJson: JSON.stringify({ tool: 'refund_payment', arguments: { order_id: 'O-5512' } }),
    errorCode: 'TIMEOUT',
    errorMessage: 'The tool did not answer in time; the outcome is unknown.',
    attemptsJson: JSON.stringify([{ attempt: 1, startedAtMs: 1_000, durationMs: 30_000, result: 'TIMEOUT' }]),
    lastKnownStateJson: JSON.stringify({ status: 'submitted' }),
    originalTopic: 'toolgate.calls',
    originalPartition: 3,
    originalOffset: '42',
    originalKey: 't1:order:O-5512',
    rawPayloadBase64: null,
    producerId: 'executor-a',
    createdAtMs: 31_000,
    ...overrides,
  };
}
