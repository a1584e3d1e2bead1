import { z } from 'zod';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { Catalog } from '../../../libs/catalog/catalog.js';

const never = (): Promise<never> => Promise.reject(new Error('exporting never runs a tool'));

/**
 * A small catalog for export tests: a public read tool, a scoped refund tool with a newer version
 * restricted to tenant t9, and a deprecated tool.
 */
export function smallCatalog(): Catalog {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: 'lookup_order',
      version: '1.0.0',
      description: 'Look up an order by id.',
      input: z.object({ orderId: z.string(), verbose: z.boolean().optional() }),
      output: z.object({ status: z.string() }),
      scopes: ['orders:read'],
      owner: 'orders',
      stateChanging: false,
      execute: never,
    }),
  );
  for (const version of ['1.0.0', '2.0.0']) {
    registry.register(
      defineTool({
        name: 'issue_refund',
        version,
        description: `Refund part of an order (v${version}).`,
        input: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
        output: z.object({ refundId: z.string() }),
        scopes: ['payments:refund'],
        owner: 'payments',
        execute: never,
      }),
      version === '2.0.0' ? { tenants: ['t9'] } : {},
    );
  }
  registry.register(
    defineTool({
      name: 'old_tool',
      version: '1.0.0',
      description: 'Superseded.',
      input: z.object({}),
      output: z.object({}),
      scopes: [],
      owner: 'nobody',
      deprecated: { reason: 'replaced by lookup_order' },
      execute: never,
    }),
  );
  return { registry, policy: createPolicyEngine({ version: 'test-1' }, []), downstreamLimits: {} };
}
