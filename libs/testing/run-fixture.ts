import type { Principal } from '../core/types.js';
import type { ProviderMessages } from '../../services/sdk/index.js';
import type { AgentHarness } from './agent-harness.js';
import { FIXTURE_PRINCIPALS } from './agent-harness.js';
import { checkCall, observe, type ObservedCall } from './call-checks.js';
import type { AgentFixture, CallRef, FixtureRound } from './fixture-schema.js';
import { MockLLMClient } from './mock-llm-client.js';

/** What one round produced. */
export interface RoundResult {
  /** 1-based. */
  readonly round: number;
  readonly step: number;
  readonly taskId: string;
  readonly calls: readonly ObservedCall[];
  /** The provider-shaped tool messages the agent appended (what the model reads next). */
  readonly messages: ProviderMessages;
  /** Requests each fake downstream operation received during the round, `<downstream>.<operation>`. */
  readonly downstreamRequests: Readonly<Record<string, number>>;
}

/** The replay of one fixture: per-round results and every assertion that failed. */
export interface FixtureRun {
  readonly fixture: string;
  readonly rounds: readonly RoundResult[];
  /** Empty when the run matched the script; otherwise one attributable sentence per mismatch. */
  readonly failures: readonly string[];
  /** Assistant responses the mock model handed out. */
  readonly modelTurns: number;
}

const OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  payments: ['refund', 'findRefund'],
  orders: ['getOrder'],
  inventory: ['getStock', 'adjust', 'findMovement'],
  crm: ['searchCustomers', 'getContact'],
  weather: ['current'],
};

let runs = 0;

/**
 * Replays a fixture through the harness's real topology: for each round the {@link MockLLMClient}
 * hands its recorded response to the SDK's `runTurn` (principal signed, keys fixed, calls published
 * on the memory bus, run by an executor's guard pipeline against the fake services, results read
 * back), then the round's expectations are checked. After the last round the ledger expectations
 * are checked and every published call must have its audit record (every attempt is audited).
 *
 * Rounds run in order, one turn each. The task id is `<harness runId>-<fixture name>-<run>`, the
 * same for every round of the run: a round that repeats an earlier step is a retried turn and must
 * reproduce its idempotency keys. Never throws for a mismatch: mismatches are returned in
 * `failures`, so a test can assert on them (or on their absence). Rejects only when the turn itself
 * cannot run (the client is stopped, the response repeats a call id).
 */
export async function runFixture(fixture: AgentFixture, harness: AgentHarness): Promise<FixtureRun> {
  runs += 1;
  const { toolgate } = harness;
  const principal = principalOf(fixture.principal);
  const taskId = `${harness.runId}-${fixture.name}-${runs}`;
  const model = new MockLLMClient(fixture.rounds);
  const rounds: RoundResult[] = [];
  const failures: string[] = [];
  const earlier = (ref: CallRef): ObservedCall | undefined =>
    rounds[ref.round - 1]?.calls.find((c) => c.providerCallId === ref.call);

  for (const [i, round] of fixture.rounds.entries()) {
    const number = i + 1;
    const ctx = harness.turnContext({ principal, taskId, step: round.step }, number);
    const before = downstreamCounts(harness);
    const outcome = await toolgate.client.runTurn(model.nextTurn(), ctx, {
      timeoutMs: harness.turnTimeoutMs,
    });
    const { results, calls, ...shaped } = outcome;
    const messages = { provider: shaped.provider, messages: shaped.messages } as ProviderMessages;
    model.receive(messages);
    const after = downstreamCounts(harness);
    const delta = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
    const observed = calls.map((call, j) => observe(call, results[j]!));
    rounds.push({
      round: number,
      step: ctx.step,
      taskId: ctx.taskId,
      calls: observed,
      messages,
      downstreamRequests: delta,
    });
    failures.push(...checkRound(number, round, observed, delta, earlier));
  }

  for (const [orderId, rows] of Object.entries(fixture.after?.ledgerRows ?? {})) {
    const ledger = await toolgate.downstreams.payments.ledger({
      tenant: principal.tenant,
      order_id: orderId,
    });
    if (ledger.length !== rows) {
      failures.push(
        `after the last round: expected ${rows} payment ledger row(s) for ${orderId}, found ${ledger.length}`,
      );
    }
  }
  const callIds = rounds.flatMap((r) => r.calls.flatMap((c) => (c.callId === undefined ? [] : [c.callId])));
  try {
    await toolgate.awaitAudited(callIds, 5_000);
  } catch (err) {
    failures.push(`after the last round: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { fixture: fixture.name, rounds, failures, modelTurns: model.turnsServed };
}

function checkRound(
  number: number,
  round: FixtureRound,
  observed: readonly ObservedCall[],
  delta: Readonly<Record<string, number>>,
  earlier: (ref: CallRef) => ObservedCall | undefined,
): string[] {
  const failures: string[] = [];
  const seen = new Set<string>();
  for (const call of observed) {
    seen.add(call.providerCallId);
    const expected = round.expect.calls[call.providerCallId];
    if (expected === undefined) {
      failures.push(
        `round ${number}, call ${call.providerCallId} (${call.tool}): the script has no expectation for this call (got ${call.result.outcome})`,
      );
    } else failures.push(...checkCall(number, call, expected, earlier));
  }
  for (const id of Object.keys(round.expect.calls)) {
    if (!seen.has(id))
      failures.push(`round ${number}: expected a call ${id}, but the response made no such call`);
  }
  for (const [name, count] of Object.entries(round.expect.downstreamRequests ?? {})) {
    if (!(name in delta) && !Object.keys(delta).some((k) => k.startsWith(`${name}.`))) {
      failures.push(
        `round ${number}: the script counts requests to ${name}, which is no known downstream operation`,
      );
      continue;
    }
    const got = name.includes('.')
      ? (delta[name] ?? 0)
      : Object.entries(delta).reduce((n, [k, v]) => (k.startsWith(`${name}.`) ? n + v : n), 0);
    if (got !== count) {
      failures.push(
        `round ${number}: expected the ${name} service to receive ${count} request(s), it received ${got}`,
      );
    }
  }
  return failures;
}

function downstreamCounts(harness: AgentHarness): Record<string, number> {
  const counts: Record<string, number> = {};
  const { faults } = harness.toolgate.downstreams;
  for (const [name, operations] of Object.entries(OPERATIONS)) {
    const injector = faults[name as keyof typeof faults];
    for (const op of operations) counts[`${name}.${op}`] = injector.received(op);
  }
  return counts;
}

function principalOf(p: AgentFixture['principal']): Principal {
  return typeof p === 'string' ? FIXTURE_PRINCIPALS[p] : p;
}
