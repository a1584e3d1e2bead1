import { checkTokens, compoundInputTokens } from './compound-input.js';

/** A rough size of one emitted tool call (name plus arguments) in tokens. */
export const DEFAULT_CALL_OVERHEAD_TOKENS = 50;

/** Inputs of {@link estimateTaskTokenCost}. */
export interface TaskCostInput {
  /** Sequential tool-calling rounds in the task (a whole number >= 0). */
  readonly rounds: number;
  /** Average size of one round's tool result, in tokens. */
  readonly avgToolResultTokens: number;
  /** System prompt, tool schemas and the user's request: what round 1 sends. */
  readonly basePromptTokens: number;
  /** Size of the tool call the model emits each round. Default {@link DEFAULT_CALL_OVERHEAD_TOKENS}. */
  readonly callOverheadTokens?: number;
}

/**
 * Estimated input tokens sent over a whole task (the cost model's `estimate_task_token_cost`): the
 * context starts at `basePromptTokens`; each round sends the accumulated context, then the context
 * grows by one tool result plus the call itself (`avgToolResultTokens + callOverheadTokens`).
 *
 * Reference figures, which the unit tests hold this to: base 1,500 and results of 2,000 give
 * 10,650 tokens for 3 rounds, 39,750 for 6 and 69,400 for 8; base 3,000 and results of 300 give
 * 10,050 for 3 rounds and 33,800 for 8; base 1,500 and results cut to 400 give 15,750 for 6.
 *
 * Pure and deterministic. Throws RangeError when `rounds` is not a whole number >= 0 or a size is
 * negative or not finite.
 */
export function estimateTaskTokenCost(input: TaskCostInput): number {
  const { rounds, avgToolResultTokens, basePromptTokens } = input;
  const overhead = input.callOverheadTokens ?? DEFAULT_CALL_OVERHEAD_TOKENS;
  if (!Number.isInteger(rounds) || rounds < 0) {
    throw new RangeError(`rounds must be a whole number >= 0, got ${rounds}`);
  }
  checkTokens('avgToolResultTokens', avgToolResultTokens);
  checkTokens('callOverheadTokens', overhead);
  const growth = new Array<number>(rounds).fill(avgToolResultTokens + overhead);
  return compoundInputTokens(basePromptTokens, growth);
}
