import { isDeepStrictEqual } from 'node:util';
import type { Principal } from '../core/types.js';
import type { ProviderMessages } from '../providers/provider-shapes.js';
import type { FixtureHarness, HarnessWorld } from './fixture-harness.js';
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
  /**
   * Requests each downstream operation received during the round, `<downstream>.<operation>`, as the
   * harness's `world.requestCounts` counts them; empty when the harness has no such world.
   */
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

let runs = 0;

/**
 * Replays a fixture through the harness's real topology: for each round the {@link MockLLMClient}
 * hands its recorded response to the SDK's `runTurn` (principal signed, keys fixed, calls published
 * on the memory bus, run by an executor's guard pipeline against the harness's tools, results read
 * back), then the round's expectations are checked. After the last round the `after` facts are
 * read from the harness's world and every published call must have its audit record (every
 * attempt is audited).
 *
 * Rounds run in order, one turn each. The task id is `<harness runId>-<fixture name>-<run>`, the
 * same for every round of the run: a round that repeats an earlier step is a retried turn and must
 * reproduce its idempotency keys. Never throws for a mismatch: mismatches are returned in
 * `failures`, so a test can assert on them (or on their absence); so is an expectation the
 * harness's world cannot check (no `requestCounts`, no such fact). Rejects before the first round
 * when the fixture names a principal the harness was not given, and when a turn itself cannot run
 * (the client is stopped, the response repeats a call id).
 */
export async function runFixture(fixture: AgentFixture, harness: FixtureHarness): Promise<FixtureRun> {
  const principal = principalOf(fixture, harness.principals);
  runs += 1;
  const { toolgate, world } = harness;
  const taskId = `${harness.runId}-${fixture.name}-${runs}`;
  const model = new MockLLMClient(fixture.rounds);
  const rounds: RoundResult[] = [];
  const failures: string[] = [];
  const earlier = (ref: CallRef): ObservedCall | undefined =>
    rounds[ref.round - 1]?.calls.find((c) => c.providerCallId === ref.call);

  for (const [i, round] of fixture.rounds.entries()) {
    const number = i + 1;
    const ctx = harness.turnContext({ principal, taskId, step: round.step }, number);
    const before = requestCounts(world);
    const outcome = await toolgate.client.runTurn(model.nextTurn(), ctx, {
      timeoutMs: harness.turnTimeoutMs,
    });
    const { results, calls, ...shaped } = outcome;
    const messages = { provider: shaped.provider, messages: shaped.messages } as ProviderMessages;
    model.receive(messages);
    const after = requestCounts(world);
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
    failures.push(...checkRound(number, round, observed, earlier));
    failures.push(...checkRequests(number, round, world, delta));
  }

  failures.push(...(await checkFacts(fixture.after ?? {}, world, principal)));
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
  return failures;
}

/**
 * Checks a round's `downstreamRequests` against what the world counted during it (`delta`). A name
 * is `<downstream>.<operation>` or `<downstream>` for the sum of its operations.
 */
function checkRequests(
  number: number,
  round: FixtureRound,
  world: HarnessWorld | undefined,
  delta: Readonly<Record<string, number>>,
): string[] {
  const failures: string[] = [];
  for (const [name, count] of Object.entries(round.expect.downstreamRequests ?? {})) {
    if (world?.requestCounts === undefined) {
      failures.push(
        `round ${number}: the script counts requests to ${name}, but the harness has no world.requestCounts to count them`,
      );
      continue;
    }
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

/** The world's request counts now, or none when it does not count. */
function requestCounts(world: HarnessWorld | undefined): Readonly<Record<string, number>> {
  return world?.requestCounts?.() ?? {};
}

/** Reads every fact the fixture's `after` names from the world and compares it with the script. */
async function checkFacts(
  after: NonNullable<AgentFixture['after']>,
  world: HarnessWorld | undefined,
  principal: Principal,
): Promise<string[]> {
  const failures: string[] = [];
  const where = 'after the last round';
  for (const [fact, subjects] of Object.entries(after)) {
    const facts = world?.facts;
    const read = facts !== undefined && Object.hasOwn(facts, fact) ? facts[fact] : undefined;
    if (read === undefined) {
      const known = Object.keys(facts ?? {});
      failures.push(
        facts === undefined
          ? `${where}: the script checks ${fact}, but the harness has no world.facts to read it from`
          : `${where}: the script checks ${fact}, which the harness's world does not know (its facts: ${known.join(', ') || 'none'})`,
      );
      continue;
    }
    for (const [subject, expected] of Object.entries(subjects)) {
      let actual: unknown;
      try {
        actual = await read(subject, principal);
      } catch (err) {
        failures.push(
          `${where}: reading ${fact} of ${subject} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
        continue;
      }
      if (!isDeepStrictEqual(actual, expected)) {
        failures.push(
          `${where}: expected ${fact} of ${subject} to be ${JSON.stringify(expected)}, found ${JSON.stringify(actual) ?? 'nothing'}`,
        );
      }
    }
  }
  return failures;
}

/** The fixture's caller: written out in full, or one of the harness's named principals. */
function principalOf(fixture: AgentFixture, principals: Readonly<Record<string, Principal>>): Principal {
  const p = fixture.principal;
  if (typeof p !== 'string') return p;
  if (Object.hasOwn(principals, p)) return principals[p]!;
  const known = Object.keys(principals);
  throw new Error(
    `fixture ${fixture.name} names principal "${p}", which this harness was not given (${
      known.length === 0 ? 'it has no named principals' : `its principals: ${known.join(', ')}`
    }); pass it in createAgentHarness({ principals }) or write the principal out in full`,
  );
}
