import { ToolgateError } from '../core/errors.js';
import { requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage } from '../pipeline/stage.js';
import { DEFAULT_MAX_ISSUES, formatZodIssues } from './format-zod-issues.js';

/**
 * Stage 1: parses the call's arguments with the tool's input schema and sets `state.args` to the
 * parsed value; later stages see only that value, never the raw arguments.
 *
 * Refuses with SCHEMA_INVALID (retryable, with a suggested fix) whose message lists each problem
 * as `path: message`, at most {@link DEFAULT_MAX_ISSUES} of them, so the model can correct the call
 * in one turn. How many such corrections a task may make is the agent loop's cap, not this stage's:
 * the pipeline sees one call at a time. Async refinements are supported; no side effects.
 */
export const validateInputStage: GuardStage = async (state) => {
  const tool = requireTool(state, 'validate-input');
  const parsed = await tool.input.safeParseAsync(state.call.arguments);
  if (parsed.success) {
    state.args = parsed.data;
    return CONTINUE;
  }
  const problems = formatZodIssues(parsed.error.issues, state.call.arguments, DEFAULT_MAX_ISSUES);
  return {
    kind: 'refuse',
    error: new ToolgateError('SCHEMA_INVALID', `Invalid arguments for ${tool.name}: ${problems}`, {
      suggestedFix: `Call ${tool.name} again with these fields corrected, supplying every required field and only fields its schema defines.`,
      cause: parsed.error,
    }),
  };
};
