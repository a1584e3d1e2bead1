import { describe, expect, it } from 'vitest';
import { toAnthropicTools } from '../../../libs/registry/export-anthropic.js';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import type { ResolveResult } from '../../../libs/registry/tool-registry.js';
import { invocation, principal, registryOf } from './registry-fixtures.js';
import { sampleTools } from './sample-tools.js';

function tool(result: ResolveResult) {
  if (!result.ok) throw new Error(result.error.message);
  return result.tool;
}

function setup() {
  const s = sampleTools();
  const registry = registryOf(s.lookupOrder, s.issueRefundV1, s.issueRefundV2);
  const hubspotCalls = { count: 0 };
  registry.overrideForTenant(
    't-hub',
    'lookup_order',
    '1.0.0',
    (args: { order_id: string }) => {
      hubspotCalls.count += 1;
      return Promise.resolve({ order_id: args.order_id, status: 'shipped', total_cents: 100 });
    },
    { downstream: 'hubspot' },
  );
  return { registry, hubspotCalls, ...s };
}

const scopes = ['orders:read', 'refunds:write'];

describe('per-tenant implementation overrides', () => {
  it('keeps what the model sees identical across tenants', () => {
    const { registry } = setup();
    const plain = registry.forPrincipal(principal('t-plain', scopes));
    const hub = registry.forPrincipal(principal('t-hub', scopes));
    expect(hub.find((d) => d.name === 'lookup_order')?.downstream).toBe('hubspot');
    expect(toOpenAITools(hub, { strict: true })).toEqual(toOpenAITools(plain, { strict: true }));
    expect(toOpenAITools(hub, { strict: false })).toEqual(toOpenAITools(plain, { strict: false }));
    expect(toAnthropicTools(hub)).toEqual(toAnthropicTools(plain));
    expect(JSON.stringify(toOpenAITools(hub, { strict: true }))).toBe(
      JSON.stringify(toOpenAITools(plain, { strict: true })),
    );
  });

  it('runs the tenant implementation for that tenant only, and the registered one elsewhere', async () => {
    const { registry, hubspotCalls, calls } = setup();
    const hubTool = tool(registry.resolve('lookup_order', { tenant: 't-hub' }));
    const plainTool = tool(registry.resolve('lookup_order', { tenant: 't-plain' }));
    const args = hubTool.input.parse({ order_id: 'O-5512' });

    await expect(hubTool.execute(args, invocation('t-hub'))).resolves.toMatchObject({ status: 'shipped' });
    expect(hubspotCalls.count).toBe(1);
    expect(calls.lookup_order).toBe(0);

    await expect(plainTool.execute(args, invocation('t-plain'))).resolves.toMatchObject({
      status: 'delivered',
    });
    expect(hubspotCalls.count).toBe(1);
    expect(calls.lookup_order).toBe(1);

    expect(hubTool.downstream).toBe('hubspot');
    expect(plainTool.downstream).toBeUndefined();
    // Everything but the implementation and downstream is the registered version's.
    const { execute: _a, downstream: _b, ...hubRest } = hubTool;
    const { execute: _c, downstream: _d, ...plainRest } = plainTool;
    expect(hubRest).toEqual(plainRest);
    expect(hubTool.input).toBe(plainTool.input);
  });

  it('applies only to the overridden version', async () => {
    const { registry, calls } = setup();
    let overridden = 0;
    registry.overrideForTenant('t-hub', 'issue_refund', '1.0.0', () => {
      overridden += 1;
      return Promise.resolve({ refund_id: 'X', amount: 1 });
    });
    const v2 = tool(registry.resolve('issue_refund', { tenant: 't-hub' }));
    const v1 = tool(registry.resolve('issue_refund', { tenant: 't-hub', version: '1.0.0' }));
    await v2.execute({ order_id: 'O-123', amount: 1, reason: 'late' }, invocation('t-hub'));
    await v1.execute({ order_id: 'O-123', amount: 1 }, invocation('t-hub'));
    expect(calls.issue_refund_v2).toBe(1);
    expect(calls.issue_refund_v1).toBe(0);
    expect(overridden).toBe(1);
  });

  it('returns a stable, frozen merged definition and follows a later deprecation', () => {
    const { registry } = setup();
    const first = tool(registry.resolve('lookup_order', { tenant: 't-hub' }));
    expect(tool(registry.resolve('lookup_order', { tenant: 't-hub' }))).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    registry.deprecate('lookup_order', '1.0.0', { reason: 'Moved' });
    const refused = registry.resolve('lookup_order', { tenant: 't-hub' });
    expect(refused.ok ? 'ok' : refused.error.code).toBe('TOOL_DEPRECATED');
  });

  it('refuses an override for a tenant that cannot see the version', () => {
    const { registry, updateInventory } = setup();
    registry.register(updateInventory, { tenants: ['t-a'] });
    expect(() =>
      registry.overrideForTenant('t-b', 'update_inventory', '1.2.0', () => Promise.resolve({})),
    ).toThrow(/not available to tenant 't-b'/);
  });
});
