import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { ana, ctxFor, storeHarness, supportDesk, toolCall, type StoreHarness } from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

const adjust = (sku: string, delta: number, reason = 'returned') =>
  toolCall('update_inventory', { sku, delta, reason });
const onHand = async (sku: string) => (await h.downstreams.inventory.getStock('t1', sku))!.on_hand;

describe('update_inventory', () => {
  it('adjusts one SKU and records the idempotency key as the movement reference', async () => {
    h = storeHarness();
    const { result } = await h.run(adjust('SKU-7', 3), ctxFor(supportDesk));
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toMatchObject({ sku: 'SKU-7', on_hand: 43 });
    const movement = await h.downstreams.inventory.findMovement('t1', result.idempotencyKey!);
    expect(movement).toMatchObject({ sku: 'SKU-7', delta: 3, on_hand_after: 43 });
  });

  it('the service itself is racy: two overlapping adjustments of one SKU lose an update', async () => {
    h = storeHarness();
    const inv = h.downstreams.inventory;
    await Promise.all([
      inv.adjust({ tenant: 't1', sku: 'SKU-7', delta: 5, reason: 'received', reference: 'r1' }),
      inv.adjust({ tenant: 't1', sku: 'SKU-7', delta: 3, reason: 'received', reference: 'r2' }),
    ]);
    // 40 + 5 + 3 would be 48; the second write overwrote the first.
    expect(await onHand('SKU-7')).not.toBe(48);
    expect(await inv.findMovement('t1', 'r1')).toBeDefined();
    expect(await inv.findMovement('t1', 'r2')).toBeDefined();
  });

  it('the conflict key is what serializes them: same SKU → same key, other SKUs run in parallel', () => {
    h = storeHarness();
    const resolved = h.catalog.registry.resolve('update_inventory', { tenant: 't1' });
    if (!resolved.ok) throw resolved.error;
    const key = (sku: string) =>
      resolved.tool.conflictKey!({ sku, delta: 1, reason: 'returned' }, ctxFor(supportDesk));
    expect(key('SKU-7')).toBe(key('SKU-7'));
    expect(key('SKU-7')).not.toBe(key('SKU-12'));
    expect(key('SKU-7').startsWith('t1:')).toBe(true);
  });

  it('one after the other (as the conflict key orders them) both updates land', async () => {
    h = storeHarness();
    await h.run(adjust('SKU-7', 5, 'received'), ctxFor(supportDesk));
    await h.run(adjust('SKU-7', 3, 'received'), ctxFor(supportDesk));
    expect(await onHand('SKU-7')).toBe(48);
  });

  it('a lost answer is settled by the status check: applied once, not retried', async () => {
    h = storeHarness();
    // The check before sending is answered; the adjustment's answer is lost.
    h.downstreams.faults.inventory.passNext(1).loseResponseNext(1);
    const { result, audit } = await h.run(adjust('SKU-21', -1, 'damaged'), ctxFor(supportDesk));
    expect(result.outcome).toBe('SUCCESS');
    expect(result.toolInvocations).toBe(1);
    expect(result.payload).toMatchObject({ sku: 'SKU-21', on_hand: 5 });
    expect(await onHand('SKU-21')).toBe(5);
    expect(h.downstreams.faults.inventory.received('adjust')).toBe(1);
    // Once before sending (nothing there), once after the lost answer (found).
    expect(h.downstreams.faults.inventory.received('findMovement')).toBe(2);
    expect(audit.decisions.find((d) => d.stage === 'execute')?.reason).toMatch(/status check/);
  });

  it('removing more than is on hand is a caller error naming what is there; nothing moves', async () => {
    h = storeHarness();
    const { result } = await h.run(adjust('SKU-21', -7, 'damaged'), ctxFor(supportDesk));
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.message).toBe(
      'Only 6 units of SKU-21 are in stock; removing 7 would go below zero.',
    );
    expect(await onHand('SKU-21')).toBe(6);
  });

  it('policy caps what support may move at once; customers cannot move stock at all', async () => {
    h = storeHarness();
    const big = await h.run(adjust('SKU-7', 25, 'received'), ctxFor(supportDesk));
    expect(big.result.outcome).toBe('POLICY_VIOLATION');
    expect(big.result.error?.message).toBe(
      "Support may add at most 20 units to one SKU per day, in total (asked: 25; today's total would be 25).",
    );
    const customer = await h.run(adjust('SKU-7', 1), ctxFor(ana));
    expect(customer.result.outcome).toBe('UNAUTHORIZED');
    const zero = await h.run(adjust('SKU-7', 0), ctxFor(supportDesk));
    expect(zero.result.outcome).toBe('SCHEMA_INVALID');
    expect(h.downstreams.faults.inventory.received()).toBe(0);
    expect(await onHand('SKU-7')).toBe(40);
  });
});
