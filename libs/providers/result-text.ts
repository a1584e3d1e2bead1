import type { ResultError, ToolCallResult } from '../core/types.js';

/** What one result looks like to the model, independent of provider. */
export interface ModelReadableResult {
  /** JSON text to place in the provider's tool-result message. */
  readonly text: string;
  /**
   * True when the call definitely did not achieve its effect (refused or failed). False for success,
   * duplicates and UNRESOLVED: an unknown outcome must not be presented as a failure.
   */
  readonly isError: boolean;
}

/**
 * What the model is told when the outcome is unknown. It must stop the model from retrying (a retry
 * could apply the effect twice) and from telling the user the action did not happen.
 */
export const UNRESOLVED_MESSAGE =
  'This action was submitted and may still be executing; its outcome is not known yet. ' +
  'Do not call it again. It will be checked and reconciled automatically. ' +
  'Tell the user the action is being confirmed, not that it went through or that it did not.';

/**
 * The one place that turns a {@link ToolCallResult} into model-readable text; both provider builders
 * use it, so the model sees the same wording whichever provider runs the agent.
 *
 * - SUCCESS and DUPLICATE: the JSON of `payload` (a duplicate returns the original result, which is
 *   what the model needs; the effect happened once). A payload of `undefined` reads `{"ok":true}`.
 * - UNRESOLVED: `{"status":"outcome_unknown","code":"UNRESOLVED","message":…,"retryable":false}` with
 *   {@link UNRESOLVED_MESSAGE}; never an `error` object, and `isError` is false.
 * - Every other outcome: `{"error":{"code","message","retryable","retry_after_ms"?,"suggested_fix"?}}`.
 *   A non-success result without `error` (a bug upstream) still reads as a structured INTERNAL error.
 *
 * Total: a payload JSON cannot encode (BigInt, a cycle, a throwing toJSON) yields an INTERNAL error
 * text instead of an exception, so one bad result never prevents answering the others.
 */
export function modelReadableResult(result: ToolCallResult): ModelReadableResult {
  switch (result.outcome) {
    case 'SUCCESS':
    case 'DUPLICATE': {
      const text = tryStringify(result.payload === undefined ? { ok: true } : result.payload);
      if (text !== undefined) return { text, isError: false };
      return errorText({
        code: 'INTERNAL',
        message: 'The tool finished, but its result could not be encoded for you.',
        retryable: false,
      });
    }
    case 'UNRESOLVED':
      return {
        text: JSON.stringify({
          status: 'outcome_unknown',
          code: 'UNRESOLVED',
          message: UNRESOLVED_MESSAGE,
          retryable: false,
        }),
        isError: false,
      };
    default:
      return errorText(
        result.error ?? {
          code: 'INTERNAL',
          message: 'The tool call ended without a usable result.',
          retryable: false,
        },
      );
  }
}

function errorText(error: ResultError): ModelReadableResult {
  const body: Record<string, unknown> = {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
  };
  if (error.retryAfterMs !== undefined) body.retry_after_ms = error.retryAfterMs;
  if (error.suggestedFix !== undefined) body.suggested_fix = error.suggestedFix;
  return { text: JSON.stringify({ error: body }), isError: true };
}

function tryStringify(value: unknown): string | undefined {
  try {
    const text: unknown = JSON.stringify(value);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}
