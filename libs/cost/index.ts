/** The cost of tool calling: the compounding input-token model and per-call token equivalents. */
export { compoundInputTokens } from './compound-input.js';
export {
  estimateTaskTokenCost,
  DEFAULT_CALL_OVERHEAD_TOKENS,
  type TaskCostInput,
} from './estimate-task-token-cost.js';
export {
  tokenEquivalents,
  estimateTokens,
  CHARS_PER_TOKEN,
  type CallTokens,
  type RequestLike,
  type ResultLike,
} from './token-equivalents.js';
export { sumTaskCost, type TaskCall, type TaskCost } from './sum-task-cost.js';
