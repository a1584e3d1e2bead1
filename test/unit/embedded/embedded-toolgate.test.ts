import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import { DEMO_PRINCIPALS } from '../../../services/demo/principals.js';
import { openAITurn } from '../../../services/demo/scripted-model.js';
import { embeddedStores } from './embedded-parts.js';

const { ana, ben } = DEMO_PRINCIPALS;
const desk: Principal = {
  ...DEMO_PRINCIPALS.supportDesk,
  scopes: ['orders:read', 'refunds:write', 'inventory:write'],
};

const startStore = embeddedStores();
const started = (executors = 2) => startStore({ executors });

let task = 0;
const ctx = (principal: Principal, taskId = `embedded-task-${++task}`) => ({ principal, taskId, step: 1 });

describe('embedded toolgate: the whole topology in one process', () => {
  it('answers a turn with provider-shaped messages and audits the attempt', async () => {
    const t = await started();
    const outcome = await t.client.runTurn(
      openAITurn('t1', [{ tool: 'lookup_order', args: { order_id: 'O-5512' } }]),
      ctx(ana),
    );
    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS']);
    expect(outcome.provider).toBe('openai');
    expect(outcome.messages).toHaveLength(1);
    expect(outcome.messages[0]).toMatchObject({ role: 'tool', tool_call_id: 'call_t1_0' });
    expect(JSON.parse(outcome.messages[0]!.content as string)).toMatchObject({
      order_id: 'O-5512',
      total: 49.99,
    });
    const callId = outcome.calls[0]!.published!.callId;
    await t.awaitAudited([callId]);
    const [stored] = await t.auditStore.query({ callId });
    expect(stored!.record).toMatchObject({
      tool: 'lookup_order',
      principalId: 'storefront:C-1',
      outcome: 'SUCCESS',
    });
    expect((await t.auditStore.verify()).ok).toBe(true);
  });

  it('a refusal crosses the bus and back without reaching the payment service', async () => {
    const t = await started();
    const outcome = await t.client.runTurn(
      openAITurn('t2', [
        { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'damaged' } },
      ]),
      ctx(ben),
    );
    expect(outcome.results[0]!.outcome).toBe('UNAUTHORIZED');
    expect(t.downstreams.faults.payments.received()).toBe(0);
    expect(await t.downstreams.payments.ledger({ tenant: 't1' })).toEqual([]);
  });

  it('re-running a turn (same task and step) is answered from the first run: one payment', async () => {
    const t = await started();
    const turn = openAITurn('t3', [
      { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'damaged' } },
    ]);
    const context = ctx(ana);
    const first = await t.client.runTurn(turn, context);
    const again = await t.client.runTurn(turn, context);
    expect(first.results[0]!.outcome).toBe('SUCCESS');
    expect(again.results[0]!.outcome).toBe('DUPLICATE');
    expect(again.results[0]!.payload).toEqual(first.results[0]!.payload);
    expect(t.downstreams.faults.payments.received('refund')).toBe(1);
    expect(await t.downstreams.payments.ledger({ tenant: 't1' })).toHaveLength(1);
  });

  it('adjustments of one SKU in one turn run one at a time (conflict key), so none is lost', async () => {
    const t = await started(3);
    const calls = [5, 3, -2, 4].map((delta) => ({
      tool: 'update_inventory',
      args: { sku: 'SKU-7', delta, reason: 'recount' },
    }));
    const other = { tool: 'update_inventory', args: { sku: 'SKU-12', delta: 1, reason: 'returned' } };
    const outcome = await t.client.runTurn(openAITurn('t4', [...calls, other]), ctx(desk));
    expect(outcome.results.map((r) => r.outcome)).toEqual([
      'SUCCESS',
      'SUCCESS',
      'SUCCESS',
      'SUCCESS',
      'SUCCESS',
    ]);
    expect(new Set(outcome.calls.slice(0, 4).map((c) => c.published!.resourceKey))).toEqual(
      new Set(['t1:inventory:SKU-7']),
    );
    // In publish order: 40 → 45 → 48 → 46 → 50.
    expect(outcome.results.slice(0, 4).map((r) => (r.payload as { on_hand: number }).on_hand)).toEqual([
      45, 48, 46, 50,
    ]);
    expect((await t.downstreams.inventory.getStock('t1', 'SKU-7'))!.on_hand).toBe(50);
    expect((await t.downstreams.inventory.getStock('t1', 'SKU-12'))!.on_hand).toBe(26);
  });

  it('stop is idempotent and ends every member', async () => {
    const t = await started();
    await Promise.all([t.stop(), t.stop()]);
    await expect(
      t.client.runTurn(openAITurn('t5', [{ tool: 'lookup_order', args: { order_id: 'O-5512' } }]), ctx(ana)),
    ).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});
