import { describe, expect, it } from 'vitest';
import type { AgentFixture } from '../../../libs/testing/fixture-schema.js';
import type { FixtureRun } from '../../../libs/testing/run-fixture.js';
import { offlineAgentFixtures, replayOnOwnHarness } from './fixture-helpers.js';

const offline = offlineAgentFixtures();

/** Each fixture on its own toolgate: they refund the same orders. */
async function replay(name: string): Promise<FixtureRun> {
  const fixture = offline.fixtures().get(name);
  if (fixture === undefined) throw new Error(`no fixture named ${name}`);
  return replayOnOwnHarness(fixture);
}

describe('agent fixtures through the embedded topology', () => {
  it('finds the four fixtures of the suite', () => {
    expect([...offline.fixtures().keys()].sort()).toEqual([
      'clean-refund',
      'duplicate-retried-turn',
      'schema-invalid-then-corrected',
      'unauthorized-order',
    ]);
  });

  it('clean path: lookup then refund, both SUCCESS, one payment', async () => {
    const run = await replay('clean-refund');
    expect(run.failures).toEqual([]);
    expect(run.modelTurns).toBe(2);
    expect(run.rounds.map((r) => r.calls.map((c) => c.result.outcome))).toEqual([['SUCCESS'], ['SUCCESS']]);
  });

  it('schema invalid, then corrected: the model reads which field was wrong', async () => {
    const run = await replay('schema-invalid-then-corrected');
    expect(run.failures).toEqual([]);
    const refused = run.rounds[0]!.calls[0]!.result;
    expect(refused.outcome).toBe('SCHEMA_INVALID');
    // What the model reads next: one Anthropic user message with an error tool_result.
    const fed = run.rounds[0]!.messages;
    expect(fed.provider).toBe('anthropic');
    expect(JSON.stringify(fed.messages)).toContain('amount');
    expect(run.rounds[1]!.calls[0]!.result.outcome).toBe('SUCCESS');
  });

  it("unauthorized: someone else's order never reaches the payment service", async () => {
    const run = await replay('unauthorized-order');
    expect(run.failures).toEqual([]);
    expect(run.rounds[0]!.downstreamRequests['payments.refund']).toBe(0);
  });

  it('duplicate: a retried turn is answered DUPLICATE with the original payload, one ledger row', async () => {
    const run = await replay('duplicate-retried-turn');
    expect(run.failures).toEqual([]);
    const [first, repeat] = run.rounds.map((r) => r.calls[0]!);
    expect(repeat!.result.outcome).toBe('DUPLICATE');
    expect(repeat!.result.payload).toEqual(first!.result.payload);
    expect(repeat!.idempotencyKey).toBe(first!.idempotencyKey);
  });

  it('a script that does not match the response: the unexpected call, the missing one, an unknown counter, an unknown fact', async () => {
    const clean = offline.fixtures().get('clean-refund')!;
    const [first] = clean.rounds;
    const altered: AgentFixture = {
      ...clean,
      name: 'clean-refund-misscripted',
      rounds: [
        {
          ...first!,
          expect: {
            calls: { call_lookup_9999: { outcome: 'SUCCESS' } },
            downstreamRequests: { 'payments.refnd': 0 },
          },
        },
      ],
      after: { ledgerRows: { 'O-5512': 1 }, ledgerRow: { 'O-5512': 1 } },
    };
    const run = await replayOnOwnHarness(altered);
    expect(run.failures).toEqual([
      'round 1, call call_lookup_5512 (lookup_order): the script has no expectation for this call (got SUCCESS)',
      'round 1: expected a call call_lookup_9999, but the response made no such call',
      'round 1: the script counts requests to payments.refnd, which is no known downstream operation',
      'after the last round: expected ledgerRows of O-5512 to be 1, found 0',
      "after the last round: the script checks ledgerRow, which the harness's world does not know (its facts: ledgerRows)",
    ]);
  });

  it('made no outbound connection', () => {
    expect(offline.guard().refused).toEqual([]);
  });
});
