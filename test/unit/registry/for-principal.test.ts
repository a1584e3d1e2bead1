import { describe, expect, it } from 'vitest';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { principal, registryOf } from './registry-fixtures.js';
import { sampleTools } from './sample-tools.js';

function catalog() {
  const s = sampleTools();
  const registry = registryOf(s.lookupOrder, s.searchOrders, s.issueRefundV1, s.issueRefundV2);
  registry.register(s.updateInventory, { tenants: ['t-warehouse'] });
  return { registry, ...s };
}

const offered = (registry: ToolRegistry, tenant: string, scopes: string[]) =>
  registry.forPrincipal(principal(tenant, scopes)).map((d) => `${d.name}@${d.version}`);

describe('ToolRegistry.forPrincipal', () => {
  it('offers only tools whose scopes the principal holds, sorted by name', () => {
    const { registry } = catalog();
    expect(offered(registry, 't1', ['orders:read'])).toEqual(['lookup_order@1.0.0', 'search_orders@0.3.1']);
    expect(offered(registry, 't1', ['refunds:write'])).toEqual(['issue_refund@2.0.0']);
    expect(offered(registry, 't1', [])).toEqual([]);
  });

  it('requires every scope of a multi-scope tool', () => {
    const { registry, lookupOrder } = catalog();
    registry.register({ ...lookupOrder, name: 'export_orders', scopes: ['orders:read', 'orders:export'] });
    expect(offered(registry, 't1', ['orders:read'])).not.toContain('export_orders@1.0.0');
    expect(offered(registry, 't1', ['orders:read', 'orders:export'])).toContain('export_orders@1.0.0');
  });

  it('hides tenant-restricted tools from other tenants', () => {
    const { registry } = catalog();
    const all = ['orders:read', 'refunds:write', 'inventory:write'];
    expect(offered(registry, 't1', all)).not.toContain('update_inventory@1.2.0');
    expect(offered(registry, 't-warehouse', all)).toContain('update_inventory@1.2.0');
  });

  it('offers one version per name and never a deprecated one', () => {
    const { registry } = catalog();
    expect(offered(registry, 't1', ['refunds:write'])).toEqual(['issue_refund@2.0.0']);
    registry.deprecate('issue_refund', '2.0.0', { reason: 'Regression in partial refunds' });
    expect(offered(registry, 't1', ['refunds:write'])).toEqual(['issue_refund@1.0.0']);
    registry.deprecate('issue_refund', '1.0.0', { reason: 'Retired' });
    expect(offered(registry, 't1', ['refunds:write'])).toEqual([]);
  });

  it('lets one tenant run a canary version while the others keep the current one', () => {
    const { registry, issueRefundV2 } = catalog();
    registry.register({ ...issueRefundV2, version: '2.1.0' }, { tenants: ['t-canary'] });
    expect(offered(registry, 't-canary', ['refunds:write'])).toEqual(['issue_refund@2.1.0']);
    expect(offered(registry, 't1', ['refunds:write'])).toEqual(['issue_refund@2.0.0']);
    const resolved = registry.resolve('issue_refund', { tenant: 't1', version: '2.1.0' });
    expect(resolved.ok ? 'ok' : resolved.error.message).toBe(
      "Tool 'issue_refund' has no version '2.1.0'. Available versions: 1.0.0, 2.0.0.",
    );
  });

  it('scopes by the principal, not by the tenant alone', () => {
    const { registry } = catalog();
    const agent = registry.forPrincipal({
      ...principal('t1', ['orders:read']),
      kind: 'agent',
      onBehalfOf: 'u-9',
    });
    expect(agent.map((d) => d.name)).toEqual(['lookup_order', 'search_orders']);
  });
});
