import { ToolgateError } from '../core/errors.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { StageName } from '../core/audit-record.js';
import type { CallState } from './call-state.js';

/**
 * The resolved tool, for stages that run after `resolve`. Throws INTERNAL when it is missing, which
 * only a mis-ordered stage array can cause; the pipeline turns the throw into a refusal of the
 * calling stage, so a wiring bug fails closed instead of running an unchecked call.
 */
export function requireTool(state: CallState, stage: StageName): ToolDefinition {
  if (state.tool === undefined) throw wiringError(stage, 'tool');
  return state.tool;
}

/** The validated arguments, for stages that run after `validate-input`. Throws like {@link requireTool}. */
export function requireArgs(state: CallState, stage: StageName): unknown {
  if (state.args === undefined) throw wiringError(stage, 'args');
  return state.args;
}

function wiringError(stage: StageName, missing: string): ToolgateError {
  return new ToolgateError('INTERNAL', 'An internal error occurred while handling the tool call.', {
    cause: new Error(`stage ${stage} ran before call state had ${missing}: check the stage order`),
  });
}
