import { ERROR_CODES, outcomeForCode, type ErrorCode } from '../core/errors.js';
import type { ResultError } from '../core/types.js';
import type { ToolCallRequestedEvent } from '../events/contracts.js';
import type { ReconciliationCase } from '../ports/case-store.js';
import type { CaseRequest } from './case-request.js';
import { notAppliedError } from './resolution.js';

/**
 * The original request as published again: the same call id, idempotency key and reply address
 * (so the executor's idempotency keeps it to one effect and the requester matches the answer), its
 * full `args` (read back from the calls topic; see original-call.ts), a fresh principal assertion,
 * and no deadline (the original one has passed; the tool's own timeouts still apply). Pure.
 */
export function resubmission(
  request: CaseRequest,
  args: Readonly<Record<string, unknown>>,
  assertion: string,
  nowMs: number,
): ToolCallRequestedEvent {
  return {
    callId: request.callId,
    providerCallId: request.providerCallId,
    tool: request.tool,
    toolVersion: request.toolVersion,
    argumentsJson: JSON.stringify(args),
    tenant: request.tenant,
    taskId: request.taskId,
    step: request.step,
    index: request.index,
    idempotencyKey: request.idempotencyKey,
    resourceKey: request.resourceKey,
    principalAssertion: assertion,
    traceId: request.traceId,
    replyTopic: request.replyTopic,
    replyPartition: request.replyPartition,
    deadlineMs: null,
    requestedAtMs: Math.floor(nowMs),
  };
}

/** The case's original error code when it is one of toolgate's codes. */
export function caseErrorCode(c: Pick<ReconciliationCase, 'context'>): ErrorCode | undefined {
  const value = c.context.errorCode;
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value)
    ? (value as ErrorCode)
    : undefined;
}

/**
 * The error a requester gets when a person confirms the call did not happen: for an unknown
 * outcome, the same as a status check's "not applied"; otherwise the call's own failure code.
 */
export function failedByHand(c: Pick<ReconciliationCase, 'context' | 'reason'>): ResultError {
  if (c.reason === 'UNRESOLVED') return notAppliedError(true);
  const code = caseErrorCode(c);
  return {
    code: code !== undefined && outcomeForCode(code) === 'EXECUTION_ERROR' ? code : 'SERVER_ERROR',
    message: 'A person confirmed the call was not carried out. It is safe to try again as a new step.',
    retryable: true,
  };
}
