import { ToolgateError } from '../../libs/core/errors.js';

/** What the model is told when its arguments are not a JSON object. */
export const ARGUMENTS_NOT_OBJECT =
  'The arguments must be a JSON object with one field per parameter of the tool.';

/**
 * Parses a request's `argumentsJson`. Only a JSON object is a valid argument list: anything else
 * (unparseable text, an array, a string, null) is refused SCHEMA_INVALID with a model-readable
 * message, retryable with corrected arguments. The parsed value is data only (JSON.parse never
 * yields functions or prototypes other than Object's; a "__proto__" key stays an own property).
 */
export function parseCallArguments(
  argumentsJson: string,
):
  | { readonly ok: true; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly error: ToolgateError } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch (err) {
    return { ok: false, error: refuse('The arguments are not valid JSON.', err) };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, error: refuse(ARGUMENTS_NOT_OBJECT) };
  }
  return { ok: true, args: parsed as Record<string, unknown> };
}

function refuse(message: string, cause?: unknown): ToolgateError {
  return new ToolgateError('SCHEMA_INVALID', message, {
    retryable: true,
    suggestedFix: ARGUMENTS_NOT_OBJECT,
    ...(cause === undefined ? {} : { cause }),
  });
}
