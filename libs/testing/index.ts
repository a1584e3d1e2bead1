/**
 * The agent developer's test kit: replay recorded or hand-written model responses
 * through toolgate's real pipeline and topology, in process, with no network and no API key.
 *
 * ```ts
 * const harness = await createAgentHarness();
 * const run = await runFixture(await loadFixture('test/fixtures/agent/clean-refund.json'), harness);
 * expect(run.failures).toEqual([]);
 * await harness.stop();
 * ```
 */
export {
  agentFixtureSchema,
  callExpectationSchema,
  fixtureRoundSchema,
  type AgentFixture,
  type CallExpectation,
  type CallRef,
  type FixtureRound,
} from './fixture-schema.js';
export { MockLLMClient } from './mock-llm-client.js';
export {
  createAgentHarness,
  FIXTURE_PRINCIPALS,
  type AgentHarness,
  type AgentHarnessOptions,
  type TurnContextFor,
} from './agent-harness.js';
export { runFixture, type FixtureRun, type RoundResult } from './run-fixture.js';
export { checkCall, type ObservedCall } from './call-checks.js';
export { loadFixture, parseFixture } from './load-fixture.js';
export { forbidOutboundNetwork, type NetworkGuard, type RefusedConnection } from './no-network.js';
