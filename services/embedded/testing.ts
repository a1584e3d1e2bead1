/**
 * `toolgate/testing`, the agent developer's test kit: replay recorded or hand-written model
 * responses through toolgate's real pipeline and topology, in process, with no network and no API
 * key, against your own tools. The fixture machinery (schema, scripted model, replay, checks) is
 * libs/testing, which knows the toolgate it drives only by shape (`FixtureHarness`);
 * `createAgentHarness` gives it the embedded toolgate. See libs/testing/README.md.
 *
 * ```ts
 * const harness = await createAgentHarness({
 *   tools: [closeTicket],
 *   principals: { ann: { id: 'u-1', tenant: 't1', kind: 'user', roles: [], scopes: ['tickets:write'] } },
 *   // Optional: what the fixture's `downstreamRequests` and `after` expectations read.
 *   world: {
 *     requestCounts: () => ({ 'tickets.close': ticketService.closeRequests }),
 *     facts: { ticketStatus: (id) => ticketService.statusOf(id) },
 *   },
 * });
 * const run = await runFixture(await loadFixture('test/fixtures/agent/close-ticket.json'), harness);
 * expect(run.failures).toEqual([]);
 * await harness.stop();
 * ```
 */
export {
  agentFixtureSchema,
  callExpectationSchema,
  fixturePrincipalSchema,
  fixtureRoundSchema,
  type AgentFixture,
  type CallExpectation,
  type CallRef,
  type FixtureRound,
} from '../../libs/testing/fixture-schema.js';
export { MockLLMClient } from '../../libs/testing/mock-llm-client.js';
export type {
  FixtureHarness,
  FixtureToolgate,
  HarnessWorld,
  TurnContextFor,
  TurnCoordinates,
  WorldFact,
} from '../../libs/testing/fixture-harness.js';
export { runFixture, type FixtureRun, type RoundResult } from '../../libs/testing/run-fixture.js';
export { checkCall, type ObservedCall } from '../../libs/testing/call-checks.js';
export { loadFixture, parseFixture } from '../../libs/testing/load-fixture.js';
export {
  forbidOutboundNetwork,
  type NetworkGuard,
  type RefusedConnection,
} from '../../libs/testing/no-network.js';
export {
  createAgentHarness,
  type AgentHarness,
  type AgentHarnessExtras,
  type AgentHarnessOptions,
} from './agent-harness.js';
