/**
 * The agent developer's test kit: replay recorded or hand-written model responses
 * through toolgate's real pipeline and topology, in process, with no network and no API key,
 * against your own tools.
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
} from './fixture-schema.js';
export { MockLLMClient } from './mock-llm-client.js';
export {
  createAgentHarness,
  type AgentHarness,
  type AgentHarnessExtras,
  type AgentHarnessOptions,
  type HarnessWorld,
  type TurnContextFor,
  type WorldFact,
} from './agent-harness.js';
export { runFixture, type FixtureRun, type RoundResult } from './run-fixture.js';
export { checkCall, type ObservedCall } from './call-checks.js';
export { loadFixture, parseFixture } from './load-fixture.js';
export { forbidOutboundNetwork, type NetworkGuard, type RefusedConnection } from './no-network.js';
