import { describe, expect, it } from 'vitest';
import { inputJsonSchema } from '../../../libs/registry/input-json-schema.js';
import {
  checkAnthropicTool,
  checkOpenAIStrictTool,
  toAnthropicTools,
  toOpenAITools,
} from '../../../libs/registry/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { CORE_TOOLS } from './registered-tools.js';
import { ctxFor, storeHarness, supportDesk, type StoreHarness } from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

function tools(): ToolDefinition[] {
  h = storeHarness();
  return CORE_TOOLS.map((name) => {
    const resolved = h.catalog.registry.resolve(name, { tenant: 't1' });
    if (!resolved.ok) throw new Error(`${name} is not registered`);
    return resolved.tool;
  });
}

type Node = {
  description?: string;
  properties?: Record<string, Node>;
  enum?: unknown[];
  required?: string[];
};

describe('store catalog: provider exports', () => {
  it('registers the six core store tools', () => {
    const all = tools();
    expect(all.map((t) => t.name).sort()).toEqual(CORE_TOOLS);
  });

  it('every tool passes the OpenAI strict-mode rules', () => {
    const exported = toOpenAITools(tools(), { strict: true });
    expect(exported).toHaveLength(6);
    for (const tool of exported)
      expect([tool.function.name, checkOpenAIStrictTool(tool)]).toEqual([tool.function.name, []]);
  });

  it('every tool passes the Anthropic tool rules', () => {
    const exported = toAnthropicTools(tools());
    expect(exported).toHaveLength(6);
    for (const tool of exported) expect([tool.name, checkAnthropicTool(tool)]).toEqual([tool.name, []]);
  });
});

describe('store catalog: schema quality', () => {
  it('every parameter has a description that says more than its name', () => {
    for (const tool of tools()) {
      const schema = inputJsonSchema(tool) as Node;
      for (const [key, prop] of Object.entries(schema.properties ?? {})) {
        expect(prop.description, `${tool.name}.${key}`).toBeTruthy();
        expect(prop.description!.length, `${tool.name}.${key}`).toBeGreaterThan(25);
      }
    }
  });

  it('descriptions name the nearest confusable neighbour', () => {
    const byName = new Map(tools().map((t) => [t.name, t.description]));
    expect(byName.get('search_customers')).toContain('crm_lookup_contact');
    expect(byName.get('crm_lookup_contact')).toContain('search_customers');
    expect(byName.get('lookup_order')).toContain('search_customers');
    expect(byName.get('issue_refund')).toContain('lookup_order');
    expect(byName.get('update_inventory')).toContain('issue_refund');
    expect(byName.get('get_weather')).toMatch(/forecast/);
  });

  it('limits the model must respect are written where it can read them', () => {
    const refund = inputJsonSchema(tools().find((t) => t.name === 'issue_refund')!) as Node;
    expect(refund.properties!.amount!.description).toMatch(/50/);
    expect(refund.properties!.amount!.description).toMatch(/2 decimals/);
    expect(refund.properties!.order_id!.description).toMatch(/O-5512/);
  });

  it('closed sets are enums and required marks what the business logic needs', () => {
    const schemas = new Map(tools().map((t) => [t.name, inputJsonSchema(t) as Node]));
    expect(schemas.get('issue_refund')!.properties!.reason!.enum).toEqual([
      'damaged',
      'not_delivered',
      'wrong_item',
      'late',
      'other',
    ]);
    expect(schemas.get('issue_refund')!.required!.toSorted()).toEqual(['amount', 'order_id', 'reason']);
    expect(schemas.get('search_customers')!.required).toEqual(['query']);
    expect(schemas.get('search_customers')!.properties!.field!.enum).toEqual(['name', 'email', 'phone']);
    expect(schemas.get('update_inventory')!.required!.toSorted()).toEqual(['delta', 'reason', 'sku']);
    expect(schemas.get('get_weather')!.required).toEqual(['city']);
  });
});

describe('store catalog: execution metadata', () => {
  it('issue_refund is a destructive, key-forwarding payments call serialized per order', () => {
    const refund = tools().find((t) => t.name === 'issue_refund')!;
    expect(refund).toMatchObject({
      stateChanging: true,
      destructive: true,
      scopes: ['refunds:write'],
      downstream: 'payments',
      timeoutMs: 2_000,
      retrySafety: { kind: 'forwards-key' },
      auditFields: ['order_id', 'amount', 'reason'],
    });
    expect(refund.retry.maxAttempts).toBe(3);
    expect(refund.conflictKey!({ order_id: 'O-5512', amount: 1, reason: 'other' }, ctxFor(supportDesk))).toBe(
      't1:order:O-5512',
    );
  });

  it('update_inventory is serialized per SKU; the read-only tools claim nothing', () => {
    const all = new Map(tools().map((t) => [t.name, t]));
    const inventory = all.get('update_inventory')!;
    const ctx = ctxFor(supportDesk);
    expect(inventory.conflictKey!({ sku: 'SKU-7', delta: 1, reason: 'returned' }, ctx)).toBe(
      't1:inventory:SKU-7',
    );
    expect(inventory.conflictKey!({ sku: 'SKU-12', delta: 1, reason: 'returned' }, ctx)).toBe(
      't1:inventory:SKU-12',
    );
    expect(inventory.retrySafety.kind).toBe('status-check');
    for (const name of ['lookup_order', 'search_customers', 'crm_lookup_contact', 'get_weather']) {
      expect(all.get(name)!.stateChanging, name).toBe(false);
      expect(all.get(name)!.retrySafety.kind, name).toBe('read-only');
    }
    expect(all.get('get_weather')!.downstream).toBe('weather');
  });

  it('declares an outbound limit for every downstream a tool calls', () => {
    const all = tools();
    for (const tool of all) expect(h.catalog.downstreamLimits[tool.downstream!], tool.name).toBeDefined();
  });
});
