import type { ToolCallResult } from '../../libs/core/types.js';
import { tokenEquivalents, type CallTokens } from '../../libs/cost/token-equivalents.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../libs/events/contracts.js';
import { argumentsAsSent } from '../../libs/guards/parse-arguments.js';
import { jsonText, wholeMs } from '../../libs/runtime/events.js';

/** Who produced a result and when; the rest comes from the request and the run. */
export interface ResultMeta {
  readonly producerId: string;
  readonly traceId: string;
  readonly completedAtMs: number;
  /** The call's token equivalents ({@link callTokens}), the same figures the metrics record. */
  readonly tokens: CallTokens;
}

/** Largest value of an Avro `int`. */
const MAX_AVRO_INT = 2_147_483_647;

/**
 * Token equivalents of one call as the model sees it (libs/cost `tokenEquivalents`, the one
 * estimator toolgate uses): in = the tool name and the arguments as sent (parsed when they are
 * JSON, else the raw text), out = the payload, else the error, the model reads back. Pure.
 */
export function callTokens(request: ToolCallRequestedEvent, result: ToolCallResult): CallTokens {
  return tokenEquivalents(result, { name: result.tool, arguments: argumentsAsSent(request.argumentsJson) });
}

/**
 * The results-topic event of one call. Identity fields (callId, providerCallId, tenant, taskId) are
 * echoed from the request so the requester can match it; `payloadJson` is the validated, redacted
 * output (SUCCESS / DUPLICATE only). `tokensIn`/`tokensOut` are `meta.tokens`, capped to an Avro
 * int. Pure.
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
    tokensIn: Math.min(MAX_AVRO_INT, meta.tokens.tokensIn),
    tokensOut: Math.min(MAX_AVRO_INT, meta.tokens.tokensOut),
    completedAtMs: wholeMs(meta.completedAtMs),
  };
}
