/**
 * Token cost of multi-round tool use, from the cost model in libs/cost: the input
 * tokens a task sends when every round resends the growing context. Prints the reference example
 * figures next to the model's, and what cutting tool results or rounds saves.
 *
 *   npx tsx bench/token-cost.ts
 *
 * Pure arithmetic: no servers, nothing timed (--quick changes nothing).
 */
import { estimateTaskTokenCost } from '../libs/cost/index.js';
import { fmt, say, table } from './lib/report.js';

interface Example {
  readonly base: number;
  readonly results: number;
  readonly rounds: number;
  /** The figure worked out by hand. */
  readonly byHand: number;
}

const EXAMPLES: readonly Example[] = [
  { base: 1_500, results: 2_000, rounds: 3, byHand: 10_650 },
  { base: 1_500, results: 2_000, rounds: 6, byHand: 39_750 },
  { base: 1_500, results: 2_000, rounds: 8, byHand: 69_400 },
  { base: 3_000, results: 300, rounds: 3, byHand: 10_050 },
  { base: 3_000, results: 300, rounds: 8, byHand: 33_800 },
  { base: 1_500, results: 400, rounds: 6, byHand: 15_750 },
];

const model = (e: Pick<Example, 'base' | 'results' | 'rounds'>): number =>
  estimateTaskTokenCost({ rounds: e.rounds, avgToolResultTokens: e.results, basePromptTokens: e.base });

say('## Token cost of multi-round tool use');
say();
say(
  'Input tokens over a task; each round resends the context, which grows by one result plus a 50-token call.',
);
say();
say(
  table(
    ['base prompt', 'avg tool result', 'rounds', 'model', 'by hand', 'same'],
    EXAMPLES.map((e) => {
      const got = model(e);
      return [
        fmt(e.base),
        fmt(e.results),
        String(e.rounds),
        fmt(got),
        fmt(e.byHand),
        got === e.byHand ? 'yes' : 'NO',
      ];
    }),
  ),
);
say();
const fat = model({ base: 1_500, results: 2_000, rounds: 6 });
const lean = model({ base: 1_500, results: 400, rounds: 6 });
const fewer = model({ base: 1_500, results: 2_000, rounds: 3 });
say(
  `Cutting 6-round results from 2,000 to 400 tokens: ${fmt(fat)} → ${fmt(lean)} (${fmt(fat / lean, 1)}× fewer); ` +
    `halving the rounds (6 → 3) instead: ${fmt(fat)} → ${fmt(fewer)} (${fmt(fat / fewer, 1)}× fewer).`,
);
