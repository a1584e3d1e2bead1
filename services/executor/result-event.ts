import type { ToolCallResult } from '../../libs/core/types.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import { jsonText, tokenEstimate, wholeMs } from './json-text.js';

/** Who produced a result and when; the rest comes from the request and the run. */
export interface ResultMeta {
  readonly producerId: string;
  readonly traceId: string;
  readonly completedAtMs: number;
}

/**
 * The results-topic event of one call. Identity fields (callId, providerCallId, tenant, taskId) are
 * echoed from the request so the requester can match it; `payloadJson` is the validated, redacted
 * output (SUCCESS / DUPLICATE only). `tokensIn`/`tokensOut` are rough estimates (4 bytes a token)
 * of what the call's arguments and its answer add to the model's context. Pure.
 */
export function toResultEvent(
  request: ToolCallRequestedEvent,
  result: ToolCallResult,
  meta: ResultMeta,
): ToolCallResultEvent {
  const payloadJson = result.payload === undefined ? null : jsonText(result.payload);
  const error = result.error;
  return {
    callId: request.callId,
    providerCallId: request.providerCallId,
    tool: result.tool,
    tenant: request.tenant,
    taskId: request.taskId,
    outcome: result.outcome,
    payloadJson,
    error:
      error === undefined
        ? null
        : {
            code: error.code,
            message: error.message,
            retryable: error.retryable,
            retryAfterMs: error.retryAfterMs === undefined ? null : wholeMs(error.retryAfterMs),
            suggestedFix: error.suggestedFix ?? null,
          },
    idempotencyKey: result.idempotencyKey ?? null,
    toolInvocations: result.toolInvocations,
    source: 'executor',
    producerId: meta.producerId,
    traceId: meta.traceId,
    tokensIn: tokenEstimate(request.argumentsJson),
    tokensOut: tokenEstimate(payloadJson ?? error?.message),
    completedAtMs: wholeMs(meta.completedAtMs),
  };
}
