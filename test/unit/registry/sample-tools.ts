import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';

/** The JSON Schema every export gives the sample tools' `order_id`. */
export const ORDER_ID_JSON_SCHEMA = {
  type: 'string',
  pattern: '^O-\\d{3,10}$',
  description: "Order id as shown to the customer, e.g. 'O-5512'.",
};

/**
 * A small, varied catalog for registry and export tests: a read-only lookup, a refund in two
 * versions (v2 adds a required field), an inventory update with nested arrays of objects, and a
 * search with defaults, formats, nested optional objects and a union. `calls` counts how often each
 * registered implementation ran, so tests can prove which one did.
 */
export function sampleTools() {
  const calls = {
    lookup_order: 0,
    issue_refund_v1: 0,
    issue_refund_v2: 0,
    update_inventory: 0,
    search_orders: 0,
  };

  const orderId = z
    .string()
    .regex(/^O-\d{3,10}$/)
    .describe("Order id as shown to the customer, e.g. 'O-5512'.");

  const lookupOrder = defineTool({
    name: 'lookup_order',
    version: '1.0.0',
    description:
      'Get the status and total of one order the customer names. Use before any refund; do not use to list orders (use search_orders).',
    input: z.object({
      order_id: orderId,
      include_items: z.boolean().optional().describe('Also return the line items.'),
    }),
    output: z.object({
      order_id: z.string(),
      status: z.enum(['placed', 'shipped', 'delivered']),
      total_cents: z.int(),
    }),
    scopes: ['orders:read'],
    owner: 'orders-team',
    stateChanging: false,
    execute: (args) => {
      calls.lookup_order += 1;
      return Promise.resolve({ order_id: args.order_id, status: 'delivered' as const, total_cents: 4999 });
    },
  });

  /** What both refund versions share: the name, output, owner and retry behaviour. */
  const refund = {
    name: 'issue_refund',
    output: z.object({ refund_id: z.string(), amount: z.number() }),
    scopes: ['refunds:write'],
    owner: 'payments-team',
    destructive: true,
    retry: { maxAttempts: 3 },
    retrySafety: { kind: 'forwards-key' },
    downstream: 'payments',
  } as const;
  const amount = z
    .number()
    .positive()
    .max(10_000)
    .describe('Refund amount in USD, positive, at most 10000; above 50 needs a manager.');

  const issueRefundV1 = defineTool({
    ...refund,
    version: '1.0.0',
    description: 'Refund part or all of a delivered order to the original payment method.',
    input: z.object({ order_id: orderId, amount }),
    auditFields: ['order_id', 'amount'],
    execute: (args) => {
      calls.issue_refund_v1 += 1;
      return Promise.resolve({ refund_id: 'R-1', amount: args.amount });
    },
  });

  const issueRefundV2 = defineTool({
    ...refund,
    version: '2.0.0',
    description:
      'Refund part or all of a delivered order to the original payment method. Use only after lookup_order confirmed the order is delivered.',
    input: z.object({
      order_id: orderId,
      amount,
      reason: z.enum(['damaged', 'late', 'wrong_item', 'other']).describe('Why the customer is refunded.'),
      note: z.string().max(500).optional().describe('Free text for the payments team.'),
    }),
    auditFields: ['order_id', 'amount', 'reason'],
    execute: (args) => {
      calls.issue_refund_v2 += 1;
      return Promise.resolve({ refund_id: 'R-2', amount: args.amount });
    },
  });

  const updateInventory = defineTool({
    name: 'update_inventory',
    version: '1.2.0',
    description:
      'Adjust stock levels for several SKUs in one warehouse. Use for stock counts, not for orders.',
    input: z.object({
      warehouse: z.enum(['AMS-1', 'BER-2', 'NYC-3']).describe('Warehouse code.'),
      line_items: z
        .array(
          z.object({
            sku: z
              .string()
              .regex(/^SKU-\d+$/)
              .describe("Stock keeping unit, e.g. 'SKU-7'."),
            quantity: z.int().min(1).max(1000).describe('Units to add, 1-1000.'),
            unit_cost_cents: z.int().min(0).optional().describe('Purchase cost per unit, in cents.'),
          }),
        )
        .min(1)
        .max(50),
      adjustment: z
        .object({
          kind: z.enum(['recount', 'delivery', 'damage']),
          note: z.string().optional(),
        })
        .optional()
        .describe('Why stock changes; defaults to a delivery.'),
      effective_at: z.iso.datetime().optional().describe('When the change took effect (UTC).'),
    }),
    output: z.object({ updated: z.int() }),
    scopes: ['inventory:write'],
    owner: 'warehouse-team',
    conflictKey: (args, ctx) => `${ctx.tenant}:inventory:${args.warehouse}`,
    auditFields: ['warehouse', 'line_items'],
    execute: (args) => {
      calls.update_inventory += 1;
      return Promise.resolve({ updated: args.line_items.length });
    },
  });

  const searchOrders = defineTool({
    name: 'search_orders',
    version: '0.3.1',
    description:
      "List the signed-in customer's orders, newest first. Use lookup_order for a single known order.",
    input: z.object({
      filters: z
        .object({
          status: z.array(z.enum(['placed', 'shipped', 'delivered'])).optional(),
          placed_after: z.iso.date().optional().describe('Only orders placed on or after this date.'),
          min_total: z.number().min(0).optional(),
        })
        .optional(),
      customer_email: z.email().optional(),
      receipt_url: z.url().optional().describe('A receipt link the customer pasted.'),
      sort: z.union([z.literal('newest'), z.literal('oldest')]).optional(),
      limit: z.int().min(1).max(100).default(20),
    }),
    output: z.object({ order_ids: z.array(z.string()) }),
    scopes: ['orders:read'],
    owner: 'orders-team',
    stateChanging: false,
    retry: { maxAttempts: 2 },
    execute: (args) => {
      calls.search_orders += 1;
      return Promise.resolve({
        order_ids: Array.from({ length: Math.min(args.limit, 2) }, (_, i) => `O-10${i}`),
      });
    },
  });

  return { calls, lookupOrder, issueRefundV1, issueRefundV2, updateInventory, searchOrders };
}

/** One definition per name, at its newest version: what a full catalog export looks like. */
export function latestSampleTools() {
  const s = sampleTools();
  return [s.lookupOrder, s.issueRefundV2, s.updateInventory, s.searchOrders];
}
