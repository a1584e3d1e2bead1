import { ERROR_CODES, type ErrorCode } from '../../libs/core/errors.js';
import type { ResultError, ToolCallResult } from '../../libs/core/types.js';
import type { ResultErrorEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';

/** What the model reads for a call whose result did not arrive before the turn's deadline. */
export const STILL_EXECUTING_MESSAGE =
  'Still executing, outcome unknown: no result arrived before the deadline. ' +
  'The call may still complete; it will be reconciled, not retried.';

/**
 * The result a turn returns for one call, from its results-topic event. `callId` is the provider's
 * call id (what the model and the provider message builders match on), not toolgate's call id.
 * A payload that is not valid JSON (a producer defect) is kept as its text rather than dropped, so
 * the model still sees what came back. Pure and total.
 */
export function resultFromEvent(event: ToolCallResultEvent, providerCallId: string): ToolCallResult {
  return {
    callId: providerCallId,
    tool: event.tool,
    outcome: event.outcome,
    ...(event.payloadJson === null ? {} : { payload: parsePayload(event.payloadJson) }),
    ...(event.error === null ? {} : { error: resultError(event.error) }),
    ...(event.idempotencyKey === null ? {} : { idempotencyKey: event.idempotencyKey }),
    toolInvocations: event.toolInvocations,
  };
}

/**
 * The UNRESOLVED result synthesized for a call still missing at the deadline: the call was
 * published and may still run, so its outcome is unknown — never reported as failed.
 * `toolInvocations` is 0 because this client observed none, not because none happened.
 */
export function stillExecuting(providerCallId: string, tool: string, idempotencyKey: string): ToolCallResult {
  return {
    callId: providerCallId,
    tool,
    outcome: 'UNRESOLVED',
    error: { code: 'UNRESOLVED', message: STILL_EXECUTING_MESSAGE, retryable: false },
    idempotencyKey,
    toolInvocations: 0,
  };
}

function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function resultError(error: ResultErrorEvent): ResultError {
  const known = (ERROR_CODES as readonly string[]).includes(error.code);
  return {
    code: known ? (error.code as ErrorCode) : 'INTERNAL',
    message: error.message,
    retryable: error.retryable,
    ...(error.retryAfterMs === null ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.suggestedFix === null ? {} : { suggestedFix: error.suggestedFix }),
  };
}
