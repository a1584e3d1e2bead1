import { ToolgateError } from '../../libs/core/errors.js';
import { isDownstreamError } from '../downstreams/downstream-error.js';

/** The model-readable wording of one downstream refusal reason. */
export interface RefusalWording {
  readonly message: string;
  readonly suggestedFix?: string;
  /** Default true: the model may retry with corrected arguments. */
  readonly retryable?: boolean;
}

/**
 * Translates what a downstream threw into what the tool throws (domain errors become
 * structured, model-readable errors; nothing about the transport leaks):
 * - a refusal (4xx) whose reason `wordings` knows → CALLER_ERROR with that wording (our sentences,
 *   never the downstream's own text);
 * - any other refusal → CALLER_ERROR with a generic sentence;
 * - everything else (5xx, resets, timeouts, aborts) is rethrown untouched, so toolgate's classifier
 *   decides between "failed" and "outcome unknown" the same way for every tool.
 */
export function translateDownstreamError(
  err: unknown,
  wordings: (
    reason: string,
    details: Readonly<Record<string, string | number>>,
  ) => RefusalWording | undefined,
): never {
  if (isDownstreamError(err) && err.refused) {
    const wording = wordings(err.reason, err.details) ?? {
      message: 'The service refused this request.',
      suggestedFix: 'Check the arguments against what the user asked for.',
    };
    throw new ToolgateError('CALLER_ERROR', wording.message, {
      retryable: wording.retryable ?? true,
      ...(wording.suggestedFix === undefined ? {} : { suggestedFix: wording.suggestedFix }),
      cause: err,
    });
  }
  throw err;
}

/**
 * What `call` resolves with; what it rejects with goes through {@link translateDownstreamError}
 * with `wordings` (default: no reason has wording of its own, so every refusal gets the generic
 * sentence).
 */
export async function callDownstream<T>(
  call: () => Promise<T>,
  wordings: Parameters<typeof translateDownstreamError>[1] = () => undefined,
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    translateDownstreamError(err, wordings);
  }
}
