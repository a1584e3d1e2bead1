import { ToolgateError } from '../core/errors.js';
import type { CallState } from '../pipeline/call-state.js';
import type { GuardStage } from '../pipeline/stage.js';
import { DEFAULT_MAX_RESULT_BYTES, truncateOutput } from './truncate-output.js';

/**
 * The last stage: what the tool returned becomes what the model may see.
 *
 * - Shape: `rawOutput` is parsed with the tool's output schema. Keys it does not declare are stripped
 *   (allow-list redaction), so they never reach the model, the result event or the audit.
 * - Mismatch: refused BAD_OUTPUT (not retryable). The effect did happen, so the idempotency layer
 *   still completes the record (outcome EXECUTION_ERROR, code BAD_OUTPUT): a duplicate never re-runs it.
 * - Size: an output larger than `tool.maxResultBytes` (default {@link DEFAULT_MAX_RESULT_BYTES}) is
 *   shortened deterministically with a visible `_truncated` note (see {@link truncateOutput}); the pass
 *   decision says so.
 * - On success `state.output` is set: what the requester gets, and what the idempotency layer stores
 *   for duplicates.
 */
export const validateOutputStage: GuardStage = async (state) => {
  const accepted = await acceptOutput(state, state.rawOutput);
  if (!accepted.ok) return { kind: 'refuse', error: accepted.error };
  return accepted.note === undefined
    ? { kind: 'continue' }
    : { kind: 'continue', reason: `output truncated to fit ${accepted.maxBytes} bytes` };
};

type AcceptedOutput =
  | { readonly ok: true; readonly output: unknown; readonly note?: string; readonly maxBytes: number }
  | { readonly ok: false; readonly error: ToolgateError };

/** Validates, redacts and sizes `raw` as this call's output and sets `state.output`. */
async function acceptOutput(state: CallState, raw: unknown): Promise<AcceptedOutput> {
  const tool = state.tool;
  if (tool === undefined) {
    return {
      ok: false,
      error: new ToolgateError('INTERNAL', 'Output validation ran before the tool was resolved.'),
    };
  }
  let parsed:
    | { success: true; data: unknown }
    | { success: false; error: { issues: readonly { path: PropertyKey[] }[] } };
  try {
    parsed = await tool.output.safeParseAsync(raw);
  } catch {
    // A transform or refinement in the schema threw: the output is just as unusable.
    parsed = { success: false, error: { issues: [] } };
  }
  if (!parsed.success) {
    const error = new ToolgateError('BAD_OUTPUT', badOutputMessage(parsed.error.issues, tool.stateChanging), {
      retryable: false,
    });
    return { ok: false, error };
  }
  const maxBytes = tool.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const sized = truncateOutput(parsed.data, maxBytes);
  state.output = sized.value;
  return sized.note === undefined
    ? { ok: true, output: sized.value, maxBytes }
    : { ok: true, output: sized.value, note: sized.note, maxBytes };
}

/** Names where the shape broke (paths come from the schema's own keys), never the values. */
function badOutputMessage(issues: readonly { path: PropertyKey[] }[], stateChanging: boolean): string {
  const paths = [...new Set(issues.map((issue) => issue.path.map(String).join('.') || '(root)'))].slice(0, 3);
  const where = paths.length > 0 ? ` (at ${paths.join(', ')})` : '';
  const shape = `The tool's response did not have the shape it promises${where}, so it is not shown.`;
  return stateChanging
    ? `${shape} The action itself was carried out: do not repeat it; tell the user its result could not be read.`
    : `${shape} Repeating the same call will not help.`;
}
