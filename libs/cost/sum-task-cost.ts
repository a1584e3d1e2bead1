import { compoundInputTokens } from './compound-input.js';
import type { CallTokens } from './token-equivalents.js';

/** One recorded call of a task: its round (the agent loop's step) and its token equivalents. */
export interface TaskCall extends CallTokens {
  readonly step: number;
}

/** Totals of a task's recorded calls. */
export interface TaskCost {
  readonly calls: number;
  /** Distinct steps: calls made in parallel within one round count once here. */
  readonly rounds: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  /**
   * What each round added to the context (its calls' requests plus results), in step order. Parallel
   * calls share one round, which is why they cost less than the same calls made in sequence.
   */
  readonly growthPerRound: readonly number[];
  /**
   * Input tokens the whole task sent, by the compounding model (estimateTaskTokenCost) applied to the recorded
   * growth; present only when `basePromptTokens` was given.
   */
  readonly estimatedInputTokens?: number;
}

/**
 * Adds up the token equivalents recorded with a task's results (see `tokenEquivalents`).
 *
 * Order-insensitive: calls are grouped by `step` and rounds are taken in ascending step order, so
 * results arriving out of order (as parallel results do) give the same totals. With
 * `basePromptTokens`, also estimates the input the task sent across rounds, each round resending
 * the base prompt plus every earlier round's calls and results. Pure; throws RangeError on a
 * negative or non-finite figure.
 */
export function sumTaskCost(
  calls: readonly TaskCall[],
  options: { readonly basePromptTokens?: number } = {},
): TaskCost {
  const byStep = new Map<number, number>();
  let tokensIn = 0;
  let tokensOut = 0;
  for (const call of calls) {
    if (
      !Number.isFinite(call.tokensIn) ||
      call.tokensIn < 0 ||
      !Number.isFinite(call.tokensOut) ||
      call.tokensOut < 0
    ) {
      throw new RangeError(`token equivalents must be finite numbers >= 0 (step ${call.step})`);
    }
    tokensIn += call.tokensIn;
    tokensOut += call.tokensOut;
    byStep.set(call.step, (byStep.get(call.step) ?? 0) + call.tokensIn + call.tokensOut);
  }
  const growthPerRound = [...byStep.entries()].sort(([a], [b]) => a - b).map(([, growth]) => growth);
  return {
    calls: calls.length,
    rounds: growthPerRound.length,
    tokensIn,
    tokensOut,
    growthPerRound,
    ...(options.basePromptTokens === undefined
      ? {}
      : { estimatedInputTokens: compoundInputTokens(options.basePromptTokens, growthPerRound) }),
  };
}
