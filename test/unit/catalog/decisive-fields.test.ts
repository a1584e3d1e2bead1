import { describe, expect, it } from 'vitest';
import { presentCall } from '../../../libs/registry/present-call.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { registeredTools } from './registered-tools.js';
import { storeHarness, type StoreHarness } from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

function catalogTools(): Map<string, ToolDefinition> {
  h = storeHarness();
  return new Map(registeredTools(h.catalog.registry).map((t) => [t.name, t]));
}

describe('store catalog: what a person is shown first', () => {
  it('names decisive fields on every destructive tool and on every tool that moves stock', () => {
    const tools = catalogTools();
    const destructive = [...tools.values()].filter((t) => t.destructive).map((t) => t.name);
    expect(destructive.sort()).toEqual(['create_purchase_order', 'issue_refund']);
    for (const name of destructive) expect(tools.get(name)?.decisiveFields?.length, name).toBeGreaterThan(0);
    expect(tools.get('issue_refund')?.decisiveFields).toEqual(['amount', 'order_id']);
    expect(tools.get('update_inventory')?.decisiveFields).toEqual(['sku', 'delta']);
    expect(tools.get('create_purchase_order')?.decisiveFields).toEqual(['sku', 'quantity', 'supplier_id']);
    expect(tools.get('preview_purchase_order')?.decisiveFields).toEqual(['sku', 'quantity', 'supplier_id']);
  });

  it('puts a refund to a person amount first, then the order', () => {
    const refund = catalogTools().get('issue_refund')!;
    const p = presentCall(refund, { reason: 'damaged', order_id: 'O-5512', amount: 49.99 });
    expect(p.ok && p.call.text).toBe(
      [
        'Call issue_refund (version 1.0.0) with:',
        'amount: 49.99',
        'order_id: O-5512',
        'reason: damaged',
      ].join('\n'),
    );
  });

  it('shows what a purchase order buys and withholds its preview token', () => {
    const create = catalogTools().get('create_purchase_order')!;
    const token = 'x'.repeat(1_000);
    const p = presentCall(create, { preview_token: token, supplier_id: 'SUP-2', quantity: 40, sku: 'SKU-7' });
    expect(p.ok && p.call.text).toBe(
      [
        'Call create_purchase_order (version 1.0.0) with:',
        'sku: SKU-7',
        'quantity: 40',
        'supplier_id: SUP-2',
        'Withheld from view: preview_token',
      ].join('\n'),
    );
  });
});
