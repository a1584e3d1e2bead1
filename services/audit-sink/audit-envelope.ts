import { ToolgateError, type ErrorCode } from '../../libs/core/errors.js';
import { prepareEnvelope } from '../../libs/audit/envelope.js';
import type { AuditRecordEvent, PolicyContextEvent } from '../../libs/events/contracts.js';
import type {
  AttemptRecord,
  AuditRecord,
  PolicyContext,
  ShadowDecision,
  StageDecision,
  StageName,
} from '../../libs/core/audit-record.js';
import type { AuditEnvelope } from '../../libs/ports/audit-store.js';

/**
 * The audit-store envelope of one audit-topic event, checked and in stored form (see
 * prepareEnvelope). `recordedAtMs` is the attempt's `finishedAtMs`: the producer records an attempt
 * when it ends. The JSON text fields are parsed back into values (`argumentsJson` must be an object);
 * null fields become absent ones, as in the pipeline's own AuditRecord.
 *
 * Throws ToolgateError MALFORMED_EVENT (or SCHEMA_INVALID for values that are not JSON data) when the
 * event cannot be stored as it is: such an event is poison, never retried. Pure.
 */
export function toAuditEnvelope(event: AuditRecordEvent): AuditEnvelope {
  const args = parseJson(event.argumentsJson, 'argumentsJson');
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new ToolgateError('MALFORMED_EVENT', 'Malformed audit event: argumentsJson is not a JSON object.');
  }
  const record: AuditRecord = {
    callId: event.callId,
    tool: event.tool,
    ...(event.toolVersion === null ? {} : { toolVersion: event.toolVersion }),
    principalId: event.principalId,
    tenant: event.tenant,
    taskId: event.taskId,
    step: event.step,
    index: event.index,
    traceId: event.traceId,
    ...(event.idempotencyKey === null ? {} : { idempotencyKey: event.idempotencyKey }),
    ...(event.resourceKey === null ? {} : { resourceKey: event.resourceKey }),
    arguments: args as Record<string, unknown>,
    ...(event.resultJson === null ? {} : { result: parseJson(event.resultJson, 'resultJson') }),
    outcome: event.outcome,
    ...(event.errorCode === null ? {} : { errorCode: event.errorCode as ErrorCode }),
    decisions: event.decisions.map((d): StageDecision => ({
      stage: d.stage as StageName,
      decision: d.decision as StageDecision['decision'],
      ...(d.reason === null ? {} : { reason: d.reason }),
      ...(d.code === null ? {} : { code: d.code as ErrorCode }),
      durationMs: d.durationMs,
    })),
    attempts: event.attempts.map((a): AttemptRecord => ({
      attempt: a.attempt,
      startedAtMs: a.startedAtMs,
      durationMs: a.durationMs,
      result: a.result as AttemptRecord['result'],
    })),
    startedAtMs: event.startedAtMs,
    finishedAtMs: event.finishedAtMs,
    ...(event.client === undefined || event.client === null
      ? {}
      : {
          client: {
            name: event.client.name,
            protocolVersion: event.client.protocolVersion,
            method: event.client.method,
          },
        }),
    ...(event.policy === undefined || event.policy === null ? {} : { policy: policyContext(event.policy) }),
  };
  return prepareEnvelope({
    recordId: event.recordId,
    producerId: event.producerId,
    source: event.source,
    recordedAtMs: event.finishedAtMs,
    record,
  });
}

/** The record form of an event's policy context: plain copies, null fields absent. */
function policyContext(policy: PolicyContextEvent): PolicyContext {
  const { shadow } = policy;
  return {
    version: policy.version,
    ...(policy.roles === null ? {} : { roles: [...policy.roles] }),
    ...(policy.facts === null ? {} : { facts: { ...policy.facts } }),
    ...(policy.ruleId === null || policy.ruleId === undefined ? {} : { ruleId: policy.ruleId }),
    ...(shadow === null
      ? {}
      : {
          shadow: {
            version: shadow.version,
            decision: shadow.decision as ShadowDecision['decision'],
            ...(shadow.ruleId === null ? {} : { ruleId: shadow.ruleId }),
          },
        }),
  };
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ToolgateError('MALFORMED_EVENT', `Malformed audit event: ${field} is not JSON.`, {
      cause: err,
    });
  }
}
