import { describe, expect, it } from 'vitest';
import { estimateTokens, sumTaskCost, tokenEquivalents } from '../../../libs/cost/index.js';

describe('tokenEquivalents', () => {
  it('counts ceil(JSON characters / 4) of the request and of the payload', () => {
    const request = { name: 'lookup_order', arguments: { order_id: 'O-5512' } };
    const payload = { order_id: 'O-5512', status: 'delivered' };
    const got = tokenEquivalents({ payload }, request);
    expect(got.tokensIn).toBe(Math.ceil(JSON.stringify(request).length / 4));
    expect(got.tokensOut).toBe(Math.ceil(JSON.stringify(payload).length / 4));
  });

  it('a refusal costs its error text; no request given means tokensIn 0', () => {
    const error = { code: 'UNAUTHORIZED', message: 'You may not view this order.', retryable: false };
    expect(tokenEquivalents({ error })).toEqual({
      tokensIn: 0,
      tokensOut: Math.ceil(JSON.stringify(error).length / 4),
    });
  });

  it('a bigger result costs proportionally more', () => {
    const small = tokenEquivalents({ payload: { rows: 'x'.repeat(400) } }).tokensOut;
    const big = tokenEquivalents({ payload: { rows: 'x'.repeat(4_000) } }).tokensOut;
    expect(big).toBeGreaterThan(small * 9);
  });

  it('never throws: a cyclic value counts as 0, a string as its own text', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(estimateTokens(cyclic)).toBe(0);
    expect(estimateTokens(10n)).toBe(0);
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens(undefined)).toBe(0);
  });
});

describe('sumTaskCost', () => {
  it('adds in and out, counts rounds by step, and is order-insensitive', () => {
    const calls = [
      { step: 1, tokensIn: 10, tokensOut: 100 },
      { step: 0, tokensIn: 20, tokensOut: 200 },
      { step: 1, tokensIn: 5, tokensOut: 50 },
    ];
    const a = sumTaskCost(calls);
    const b = sumTaskCost([...calls].reverse());
    expect(a).toEqual(b);
    expect(a).toMatchObject({
      calls: 3,
      rounds: 2,
      tokensIn: 35,
      tokensOut: 350,
      growthPerRound: [220, 165],
    });
    expect(a.estimatedInputTokens).toBeUndefined();
  });

  it('with a base prompt, estimates the compounding input: three seed rounds give 10,650', () => {
    const round = (step: number) => ({ step, tokensIn: 50, tokensOut: 2_000 });
    const cost = sumTaskCost([round(0), round(1), round(2)], { basePromptTokens: 1_500 });
    expect(cost.estimatedInputTokens).toBe(10_650);
  });

  it('the same calls in one parallel round cost less input than spread over sequential rounds', () => {
    const parallel = sumTaskCost(
      [0, 0, 0, 0].map((step) => ({ step, tokensIn: 50, tokensOut: 2_000 })),
      { basePromptTokens: 1_500 },
    );
    const sequential = sumTaskCost(
      [0, 1, 2, 3].map((step) => ({ step, tokensIn: 50, tokensOut: 2_000 })),
      { basePromptTokens: 1_500 },
    );
    expect(parallel.tokensOut).toBe(sequential.tokensOut);
    expect(parallel.estimatedInputTokens!).toBeLessThan(sequential.estimatedInputTokens!);
  });

  it('refuses negative figures', () => {
    expect(() => sumTaskCost([{ step: 0, tokensIn: -1, tokensOut: 0 }])).toThrow(RangeError);
  });
});
