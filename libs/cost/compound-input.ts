/**
 * Total input tokens of a task whose context grows round by round.
 *
 * Every round resends the whole conversation so far: round 1 sends `basePromptTokens`, and each
 * round then adds what it produced (`growthPerRound[i]`: the tool calls emitted and their results)
 * to the context every later round resends. The total is therefore the sum of the context sizes at
 * the start of each round — close to quadratic in the number of rounds, not linear.
 *
 * Rounds are counted by `growthPerRound.length`; the growth of the last round is accepted and
 * ignored (nothing resends it within the task). Throws RangeError on a negative or non-finite size,
 * because a cost figure built on one would be meaningless rather than merely imprecise.
 */
export function compoundInputTokens(basePromptTokens: number, growthPerRound: readonly number[]): number {
  checkTokens('basePromptTokens', basePromptTokens);
  let total = 0;
  let accumulated = basePromptTokens;
  growthPerRound.forEach((growth, i) => {
    checkTokens(`growthPerRound[${i}]`, growth);
    total += accumulated;
    accumulated += growth;
  });
  return total;
}

/** Throws RangeError unless `n` is a finite number >= 0. */
export function checkTokens(name: string, n: number): void {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`${name} must be a finite number >= 0, got ${n}`);
}
