import type { ToolgateError } from './errors.js';
import type { ResultError } from './types.js';

/**
 * The model-readable error a result carries for `error`. Optional fields appear only when set.
 * Authorization refusals never carry a suggested fix, whatever the error says: a hint at how to pass
 * an authorization check is a probing aid.
 */
export function toResultError(error: ToolgateError): ResultError {
  const hideFix = error.code === 'UNAUTHORIZED' || error.code === 'INVALID_PRINCIPAL';
  return {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.suggestedFix === undefined || hideFix ? {} : { suggestedFix: error.suggestedFix }),
  };
}
