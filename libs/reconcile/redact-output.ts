import type { ResultError } from '../core/types.js';
import { DEFAULT_MAX_RESULT_BYTES, truncateOutput } from '../guards/truncate-output.js';
import type { ToolDefinition } from '../registry/tool-definition.js';

/** What a confirmed result becomes before anyone sees it. */
export type RedactedOutput =
  | { readonly ok: true; readonly payload: unknown }
  /** The effect happened but the result does not have the promised shape: BAD_OUTPUT, not shown. */
  | { readonly ok: false; readonly error: ResultError };

/**
 * Applies the tool's output rules to a result that did not come from the pipeline (a status check's
 * "applied" result, or one a person supplies): parsed with the output schema, so undeclared keys are
 * stripped (allow-list redaction), then fitted to the tool's size budget. The same rules as stage 7,
 * so a reconciled answer never shows the model more than a normal one would. Never throws.
 */
export async function redactOutput(tool: ToolDefinition, raw: unknown): Promise<RedactedOutput> {
  let parsed: { success: true; data: unknown } | { success: false };
  try {
    parsed = await tool.output.safeParseAsync(raw);
  } catch {
    parsed = { success: false };
  }
  if (!parsed.success) {
    return {
      ok: false,
      error: {
        code: 'BAD_OUTPUT',
        message:
          'The action was carried out, but its result did not have the shape the tool promises, so it is not shown. Do not repeat it; tell the user its result could not be read.',
        retryable: false,
      },
    };
  }
  return {
    ok: true,
    payload: truncateOutput(parsed.data, tool.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES).value,
  };
}
