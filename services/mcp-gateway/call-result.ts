import type { ResultError, ToolCallResult } from '../../libs/core/types.js';

/** The key under `_meta` of a result that carries toolgate's own view of the call. */
export const TOOLGATE_RESULT_META = 'io.toolgate/result';

/** What the model reads for a call whose outcome is unknown (never a failure, never to be retried). */
export const OUTCOME_UNKNOWN_TEXT =
  'Outcome unknown: the call was accepted but no result arrived in time. It may still complete; ' +
  'toolgate reconciles it. Do not retry this call.';

/** The MCP `CallToolResult` the gateway answers with (the fields it sets). */
export interface McpCallResult {
  readonly [key: string]: unknown;
  readonly content: { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly _meta: {
    readonly [TOOLGATE_RESULT_META]: {
      readonly outcome: ToolCallResult['outcome'];
      readonly idempotencyKey?: string;
      readonly error?: ResultError;
    };
  };
}

/**
 * One toolgate result as an MCP tool result. Pure and total.
 * - SUCCESS / DUPLICATE (a repeat answered with the original result): the validated, redacted
 *   payload as text (a string as it is, anything else as JSON), and as `structuredContent` when the tool has an object output schema
 *   (`structured`) and the payload is an object — the executor validated it against that schema.
 * - UNRESOLVED: `isError` (so no client reads it as a schema-conforming success) with
 *   {@link OUTCOME_UNKNOWN_TEXT} and the structured error; the text says it is not a failure.
 * - Every other outcome (refusals the model can act on, failures): `isError` with toolgate's
 *   structured error (code, message, retryable, suggested fix) as JSON text.
 * `_meta` names the outcome and idempotency key for clients that read them.
 */
export function toMcpCallResult(result: ToolCallResult, structured: boolean): McpCallResult {
  const meta = {
    [TOOLGATE_RESULT_META]: {
      outcome: result.outcome,
      ...(result.idempotencyKey === undefined ? {} : { idempotencyKey: result.idempotencyKey }),
      ...(result.error === undefined ? {} : { error: result.error }),
    },
  };
  if (result.outcome === 'SUCCESS' || result.outcome === 'DUPLICATE') {
    const payload = result.payload;
    const text =
      payload === undefined ? 'null' : typeof payload === 'string' ? payload : JSON.stringify(payload);
    const isObject = typeof payload === 'object' && payload !== null && !Array.isArray(payload);
    return {
      content: [{ type: 'text', text }],
      ...(structured && isObject ? { structuredContent: payload as Record<string, unknown> } : {}),
      _meta: meta,
    };
  }
  const error: ResultError = result.error ?? {
    code: 'INTERNAL',
    message: 'The call ended without a result.',
    retryable: false,
  };
  const text =
    result.outcome === 'UNRESOLVED'
      ? `${OUTCOME_UNKNOWN_TEXT}\n${JSON.stringify({ error: { ...error, retryable: false } })}`
      : JSON.stringify({ error });
  return { content: [{ type: 'text', text }], isError: true, _meta: meta };
}
