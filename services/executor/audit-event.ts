import type { AuditRecordEvent } from '../../libs/events/contracts.js';
import type { AuditRecord } from '../../libs/pipeline/audit-record.js';
import { jsonText, wholeMs } from './json-text.js';

/**
 * The audit-topic event of one attempt. `recordId` must be unique per attempt (the audit store's
 * idempotency key): a redelivered call is a new attempt and gets a new id, so it is recorded as its
 * own attempt (typically DUPLICATE) instead of being swallowed as a copy of the first. Arguments
 * and result are already reduced to the tool's allow-lists by the pipeline. Pure.
 */
export function toAuditEvent(
  record: AuditRecord,
  meta: { readonly recordId: string; readonly producerId: string },
): AuditRecordEvent {
  return {
    recordId: meta.recordId,
    callId: record.callId,
    tool: record.tool,
    toolVersion: record.toolVersion ?? null,
    principalId: record.principalId,
    tenant: record.tenant,
    taskId: record.taskId,
    step: record.step,
    index: record.index,
    traceId: record.traceId,
    idempotencyKey: record.idempotencyKey ?? null,
    resourceKey: record.resourceKey ?? null,
    argumentsJson: jsonText(record.arguments),
    resultJson: record.result === undefined ? null : jsonText(record.result),
    outcome: record.outcome,
    errorCode: record.errorCode ?? null,
    decisions: record.decisions.map((d) => ({
      stage: d.stage,
      decision: d.decision,
      reason: d.reason ?? null,
      code: d.code ?? null,
      durationMs: d.durationMs,
    })),
    attempts: record.attempts.map((a) => ({
      attempt: a.attempt,
      startedAtMs: wholeMs(a.startedAtMs),
      durationMs: a.durationMs,
      result: a.result,
    })),
    source: 'executor',
    producerId: meta.producerId,
    startedAtMs: wholeMs(record.startedAtMs),
    finishedAtMs: wholeMs(record.finishedAtMs),
  };
}
