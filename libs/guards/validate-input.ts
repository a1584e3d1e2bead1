import { requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage } from '../pipeline/stage.js';
import { validateArguments } from '../registry/validate-arguments.js';

/**
 * Stage 1: parses the call's arguments with the tool's input schema ({@link validateArguments})
 * and sets `state.args` to the parsed value; later stages see only that value, never the raw
 * arguments.
 *
 * Refuses with SCHEMA_INVALID (retryable, with a suggested fix) whose message lists each problem
 * as `path: message`, at most `DEFAULT_MAX_ISSUES` of them, so the model can correct the call
 * in one turn. How many such corrections a task may make is the agent loop's cap, not this stage's:
 * the pipeline sees one call at a time. Async refinements are supported; no side effects.
 */
export const validateInputStage: GuardStage = async (state) => {
  const tool = requireTool(state, 'validate-input');
  const checked = await validateArguments(tool, state.call.arguments);
  if (!checked.ok) return { kind: 'refuse', error: checked.error };
  state.args = checked.args;
  return CONTINUE;
};
