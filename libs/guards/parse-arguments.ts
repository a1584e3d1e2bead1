import { ToolgateError } from '../core/errors.js';
import type { CallState } from '../pipeline/call-state.js';
import { CONTINUE, type StageResult } from '../pipeline/stage.js';

/** What the model is told when its arguments are not a JSON object. */
export const ARGUMENTS_NOT_OBJECT =
  'The arguments must be a JSON object with one field per parameter of the tool.';

/**
 * The second ingress stage of a signed run (`RunOptions.signed`): the arguments as sent become
 * `state.call.arguments` when they are a JSON object (see {@link parseCallArguments}); otherwise,
 * or when the transport already refused them (`signed.argumentsRefusal`: too large), the call is
 * refused SCHEMA_INVALID. Pure.
 */
export function parseArgumentsStage(state: CallState): Promise<StageResult> {
  const { signed } = state;
  if (signed === undefined) return Promise.resolve(CONTINUE);
  if (signed.argumentsRefusal !== undefined) {
    return Promise.resolve({ kind: 'refuse', error: signed.argumentsRefusal });
  }
  const parsed = parseCallArguments(signed.argumentsJson);
  if (!parsed.ok) return Promise.resolve({ kind: 'refuse', error: parsed.error });
  state.call = { ...state.call, arguments: parsed.args };
  return Promise.resolve(CONTINUE);
}

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

/** Arguments as the model sent them: parsed JSON, or the text when it does not parse (for counting). */
export function argumentsAsSent(argumentsJson: string): unknown {
  try {
    return JSON.parse(argumentsJson) as unknown;
  } catch {
    return argumentsJson;
  }
}
