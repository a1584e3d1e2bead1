import type { AuditRecordEvent } from '../../libs/events/contracts.js';

/** The call an operator's record belongs to: its chain (tenant) and the ids that join it to the call. */
export interface OperatorAuditCall {
  readonly callId: string;
  readonly tool: string;
  readonly toolVersion: string | null;
  readonly tenant: string;
  readonly taskId: string;
  readonly step: number;
  readonly index: number;
  readonly traceId: string;
  readonly idempotencyKey: string | null;
  readonly resourceKey: string | null;
}

/** What an operator did or was refused, as one decision of the record. */
export interface OperatorAuditDecision {
  readonly stage: 'authorize' | 'business-rules';
  readonly decision: 'pass' | 'refuse';
  readonly reason: string;
  /** The call's outcome as the record states it (nothing the operator did ran the tool). */
  readonly outcome: 'POLICY_VIOLATION' | 'UNAUTHORIZED';
  readonly errorCode: 'UNAUTHORIZED' | null;
}

/**
 * An audit record the console writes under an operator (`actor`, e.g. `operator:mia`; source
 * `operator`, no attempts, no result), in `call`'s chain, at `nowMs`. `argumentsJson` is what the
 * record may show of the call's arguments (already through the tool's allow-list). Pure.
 */
export function operatorAuditEvent(input: {
  readonly recordId: string;
  readonly call: OperatorAuditCall;
  readonly actor: string;
  readonly argumentsJson: string;
  readonly decision: OperatorAuditDecision;
  readonly nowMs: number;
}): AuditRecordEvent {
  const { call, decision } = input;
  return {
    recordId: input.recordId,
    ...call,
    principalId: input.actor,
    argumentsJson: input.argumentsJson,
    resultJson: null,
    outcome: decision.outcome,
    errorCode: decision.errorCode,
    decisions: [
      {
        stage: decision.stage,
        decision: decision.decision,
        reason: decision.reason,
        code: decision.errorCode,
        durationMs: 0,
      },
    ],
    attempts: [],
    source: 'operator',
    producerId: input.actor,
    startedAtMs: Math.floor(input.nowMs),
    finishedAtMs: Math.floor(input.nowMs),
  };
}
