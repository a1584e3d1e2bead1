import { describe, expect, it } from 'vitest';
import { compoundInputTokens, estimateTaskTokenCost } from '../../../libs/cost/index.js';

const cost = (rounds: number, avgToolResultTokens: number, basePromptTokens: number) =>
  estimateTaskTokenCost({ rounds, avgToolResultTokens, basePromptTokens });

describe('estimateTaskTokenCost: the reference figures', () => {
  it('base 1,500, results 2,000: 3 rounds send 10,650 input tokens', () => {
    expect(cost(3, 2_000, 1_500)).toBe(10_650);
  });

  it('base 1,500, results 2,000: 6 rounds send 39,750 (about 3.7× for twice the rounds)', () => {
    expect(cost(6, 2_000, 1_500)).toBe(39_750);
    expect(cost(6, 2_000, 1_500) / cost(3, 2_000, 1_500)).toBeCloseTo(3.73, 2);
  });

  it('base 1,500, results 2,000: 8 rounds send 69,400 (about 6.5× the 3-round task)', () => {
    expect(cost(8, 2_000, 1_500)).toBe(69_400);
    expect(cost(8, 2_000, 1_500) / cost(3, 2_000, 1_500)).toBeCloseTo(6.5, 1);
  });

  it('base 3,000, results 300: 3 rounds send 10,050', () => {
    expect(cost(3, 300, 3_000)).toBe(10_050);
  });

  it('base 3,000, results 300: 8 rounds send 33,800 (about 3.4×)', () => {
    expect(cost(8, 300, 3_000)).toBe(33_800);
    expect(cost(8, 300, 3_000) / cost(3, 300, 3_000)).toBeCloseTo(3.36, 2);
  });

  it('results cut to 400 tokens bring the 6-round task down to 15,750', () => {
    expect(cost(6, 400, 1_500)).toBe(15_750);
  });
});

describe('estimateTaskTokenCost: the model itself', () => {
  it('0 rounds send nothing; 1 round sends only the base prompt', () => {
    expect(cost(0, 2_000, 1_500)).toBe(0);
    expect(cost(1, 2_000, 1_500)).toBe(1_500);
  });

  it('the call overhead is a parameter (default 50)', () => {
    const withDefault = cost(3, 2_000, 1_500);
    const explicit = estimateTaskTokenCost({
      rounds: 3,
      avgToolResultTokens: 2_000,
      basePromptTokens: 1_500,
      callOverheadTokens: 50,
    });
    const none = estimateTaskTokenCost({
      rounds: 3,
      avgToolResultTokens: 2_000,
      basePromptTokens: 1_500,
      callOverheadTokens: 0,
    });
    expect(explicit).toBe(withDefault);
    // 1,500 + 3,500 + 5,500: the 50-token call is resent by every later round (50 + 100 = 150).
    expect(none).toBe(10_500);
  });

  it('grows faster than linearly: each extra round costs more than the one before', () => {
    const deltas = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => cost(n, 2_000, 1_500) - cost(n - 1, 2_000, 1_500));
    for (let i = 1; i < deltas.length; i++) expect(deltas[i]!).toBeGreaterThan(deltas[i - 1]!);
  });

  it('refuses fractional or negative rounds and negative sizes', () => {
    expect(() => cost(2.5, 100, 100)).toThrow(RangeError);
    expect(() => cost(-1, 100, 100)).toThrow(RangeError);
    expect(() => cost(2, -1, 100)).toThrow(RangeError);
    expect(() => cost(2, 100, Number.NaN)).toThrow(RangeError);
  });

  it('compoundInputTokens with equal growth is the same model', () => {
    expect(compoundInputTokens(1_500, [2_050, 2_050, 2_050])).toBe(10_650);
  });
});
