import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { REFUND_REASONS } from '../../../services/downstreams/payments/payments-api.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import type { StoreCatalog } from '../../../services/catalog/store-catalog.js';
import { storeHarnessOptions } from '../../../services/demo/store-harness.js';
import type { AgentHarnessOptions } from '../../../services/embedded/agent-harness.js';
import type { FixtureRun } from '../../../libs/testing/run-fixture.js';
import { offlineAgentFixtures, replayOnOwnHarness } from './fixture-helpers.js';

/**
 * The fixture suite must catch a regression specifically and attributably. Each test
 * here ships a realistic regression into an otherwise untouched topology, replays every fixture,
 * and asserts that exactly the fixture guarding that property fails, with a message naming the
 * round, the call and the cause, while the others still pass.
 */

const offline = offlineAgentFixtures();

/** Replays every fixture on a fresh store of its own, built by `options`. */
async function replayAll(options: () => AgentHarnessOptions): Promise<Map<string, FixtureRun>> {
  const runs = new Map<string, FixtureRun>();
  for (const fixture of offline.fixtures().values()) {
    runs.set(fixture.name, await replayOnOwnHarness(fixture, options()));
  }
  return runs;
}

/** The store with a deployment's change applied to its catalog before anything starts. */
function storeWith(change: (catalog: StoreCatalog) => void): AgentHarnessOptions {
  const store = storeHarnessOptions();
  change(store.catalog);
  return store;
}

/**
 * issue_refund 1.0.1 as a careless schema edit would ship it: `amount` lost `.positive()` (and its
 * cent granularity). Registered beside 1.0.0, it becomes the current version, as in a deployment.
 */
function shipLoosenedRefundSchema(catalog: StoreCatalog): void {
  const resolved = catalog.registry.resolve('issue_refund', { tenant: 't1' });
  if (!resolved.ok) throw new Error('issue_refund is not in the catalog');
  const current = resolved.tool as ToolDefinition<Record<string, unknown>, unknown>;
  const loosened = z.strictObject({
    order_id: z.string().regex(/^O-\d{3,10}$/),
    amount: z.number().max(10_000),
    reason: z.enum(REFUND_REASONS),
  });
  catalog.registry.register(defineTool({ ...current, version: '1.0.1', input: loosened }));
}

/**
 * An agent loop that stamps each attempt of a turn with the time, so the task id (and therefore
 * the idempotency key, which covers it) differs between a turn and its retry: the classic
 * "idempotency key that includes a timestamp" regression, at the only place the SDK takes it from.
 */
const timestampedTaskIds: AgentHarnessOptions['turnContext'] = (base) => ({
  ...base,
  taskId: `${base.taskId}@${process.hrtime.bigint().toString()}`,
});

describe('the fixture suite catches regressions', () => {
  it('a loosened refund schema: only the schema fixture fails, naming the call and the leak', async () => {
    const runs = await replayAll(() => storeWith(shipLoosenedRefundSchema));
    const failures = runs.get('schema-invalid-then-corrected')!.failures;
    console.log(`loosened schema →\n  ${failures.join('\n  ')}`);

    expect(failures[0]).toMatch(
      /^round 1, call toolu_refund_negative \(issue_refund\): expected outcome SCHEMA_INVALID, got EXECUTION_ERROR \(CALLER_ERROR: /,
    );
    expect(failures).toContain(
      'round 1: expected the payments service to receive 0 request(s), it received 1',
    );
    for (const name of ['clean-refund', 'unauthorized-order', 'duplicate-retried-turn']) {
      expect({ name, failures: runs.get(name)!.failures }).toEqual({ name, failures: [] });
    }
  });

  it('a timestamp in the key material: only the duplicate fixture fails, showing both keys', async () => {
    const runs = await replayAll(() => ({ ...storeHarnessOptions(), turnContext: timestampedTaskIds }));
    const run = runs.get('duplicate-retried-turn')!;
    console.log(`timestamped key →\n  ${run.failures.join('\n  ')}`);

    const [first, retry] = run.rounds.map((r) => r.calls[0]!);
    expect(first!.idempotencyKey).not.toBe(retry!.idempotencyKey);
    expect(run.failures[0]).toMatch(
      /^round 2, call call_refund_late \(issue_refund\): expected outcome DUPLICATE, got SUCCESS — the idempotency key changed between retries: tg1:[0-9a-f]{64} vs tg1:[0-9a-f]{64}$/,
    );
    expect(run.failures[0]).toContain(`${first!.idempotencyKey} vs ${retry!.idempotencyKey}`);
    expect(run.failures).toContain(
      'round 2: expected the payments.refund service to receive 0 request(s), it received 1',
    );
    expect(run.failures).toContain('after the last round: expected ledgerRows of O-5512 to be 1, found 2');
    for (const name of ['clean-refund', 'unauthorized-order', 'schema-invalid-then-corrected']) {
      expect({ name, failures: runs.get(name)!.failures }).toEqual({ name, failures: [] });
    }
  });

  it('made no outbound connection', () => {
    expect(offline.guard().refused).toEqual([]);
  });
});
