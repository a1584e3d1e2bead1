import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';

/**
 * Counts how often each tool body ran, so tests can prove a refused or repeated call never ran, and
 * keeps the arguments a body was given when it passes them, so tests can prove what ran.
 */
export class Effects {
  readonly counts = new Map<string, number>();
  readonly given = new Map<string, unknown[]>();
  record(tool: string, args?: unknown): void {
    this.counts.set(tool, (this.counts.get(tool) ?? 0) + 1);
    if (args !== undefined) this.given.set(tool, [...this.received(tool), structuredClone(args)]);
  }
  of(tool: string): number {
    return this.counts.get(tool) ?? 0;
  }
  /** The arguments of each recorded run of `tool` that passed them, oldest first. */
  received(tool: string): readonly unknown[] {
    return this.given.get(tool) ?? [];
  }
}

/** The three tools the provider fixtures call, with conflict keys on the two that change state. */
export function fixtureTools(effects = new Effects()): ToolDefinition[] {
  const getOrderStatus = defineTool({
    name: 'get_order_status',
    version: '1.0.0',
    description: 'Looks up the status of one order by its id.',
    input: z.object({ order_id: z.string() }),
    output: z.object({ order_id: z.string(), status: z.string() }),
    scopes: ['orders:read'],
    owner: 'orders-team',
    stateChanging: false,
    execute: async (args) => {
      effects.record('get_order_status');
      return { order_id: args.order_id, status: 'delivered' };
    },
  });
  const issueRefund = defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refunds part or all of an order to the original payment method.',
    input: z.object({
      order_id: z.string(),
      amount: z.number().positive(),
      currency: z.string(),
      reason: z.string(),
    }),
    output: z.object({ refund_id: z.string(), amount: z.number() }),
    scopes: ['orders:refund'],
    owner: 'payments-team',
    retrySafety: { kind: 'forwards-key' },
    conflictKey: (args, ctx) => `${ctx.tenant}:order:${args.order_id}`,
    execute: async (args) => {
      effects.record('issue_refund');
      return { refund_id: `R-${args.order_id}`, amount: args.amount };
    },
  });
  const reserveInventory = defineTool({
    name: 'reserve_inventory',
    version: '1.0.0',
    description: 'Reserves units of one SKU in one warehouse.',
    input: z.object({ sku: z.string(), quantity: z.number().int().positive(), warehouse: z.string() }),
    output: z.object({ reservation_id: z.string() }),
    scopes: ['inventory:write'],
    owner: 'inventory-team',
    conflictKey: (args, ctx) => `${ctx.tenant}:inventory:${args.sku}`,
    execute: async (args) => {
      effects.record('reserve_inventory');
      return { reservation_id: `RES-${args.sku}-${args.quantity}` };
    },
  });
  return [getOrderStatus, issueRefund, reserveInventory] as unknown as ToolDefinition[];
}

export function registryOf(tools: readonly ToolDefinition[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}
