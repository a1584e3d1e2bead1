import { z } from 'zod';
import { ToolgateError } from '../core/errors.js';
import { DEFAULT_MAX_ISSUES, formatZodIssues } from './format-zod-issues.js';
import type { ToolDefinition } from './tool-definition.js';

/**
 * A call's arguments checked against its tool's input schema: the parsed value (unknown fields of a
 * non-strict object gone, defaults applied, nulls for optional fields dropped, transforms run) or
 * the refusal the model is given.
 */
export type ArgumentsCheck<I = unknown> =
  { readonly ok: true; readonly args: I } | { readonly ok: false; readonly error: ToolgateError };

/**
 * Parses `args` with `tool.input` — the one validation every path runs before a call is acted on
 * or shown to a person (the guard pipeline's first stage, the MCP gateway's confirmation, the
 * rendering of a call for a person). Async refinements are supported. A refusal is SCHEMA_INVALID
 * (retryable, with a suggested fix) whose message lists each problem as `path: message`, at most
 * {@link DEFAULT_MAX_ISSUES} of them; values from the arguments are never echoed. No side effects.
 */
export async function validateArguments<I>(
  tool: ToolDefinition<I>,
  args: unknown,
): Promise<ArgumentsCheck<I>> {
  const parsed = await tool.input.safeParseAsync(args);
  return parsed.success
    ? { ok: true, args: parsed.data }
    : { ok: false, error: refusal(tool, parsed.error, args) };
}

/**
 * {@link validateArguments} without awaiting, for callers that must answer at once (rendering a
 * call for a person). A schema that needs asynchronous validation (an async refinement) cannot be
 * checked this way: that is refused too (SCHEMA_INVALID, not retryable — the arguments are not at
 * fault), never passed as valid.
 */
export function validateArgumentsNow<I>(
  tool: Pick<ToolDefinition<I>, 'name' | 'input'>,
  args: unknown,
): ArgumentsCheck<I> {
  let parsed: ReturnType<typeof tool.input.safeParse>;
  try {
    parsed = tool.input.safeParse(args);
  } catch (err) {
    if (!(err instanceof z.core.$ZodAsyncError)) throw err;
    return {
      ok: false,
      error: new ToolgateError(
        'SCHEMA_INVALID',
        `The input schema of ${tool.name} validates asynchronously; its arguments cannot be checked here.`,
        { retryable: false, cause: err },
      ),
    };
  }
  return parsed.success
    ? { ok: true, args: parsed.data }
    : { ok: false, error: refusal(tool, parsed.error, args) };
}

function refusal(tool: Pick<ToolDefinition, 'name'>, error: z.ZodError, args: unknown): ToolgateError {
  const problems = formatZodIssues(error.issues, args, DEFAULT_MAX_ISSUES);
  return new ToolgateError('SCHEMA_INVALID', `Invalid arguments for ${tool.name}: ${problems}`, {
    suggestedFix: `Call ${tool.name} again with these fields corrected, supplying every required field and only fields its schema defines.`,
    cause: error,
  });
}
