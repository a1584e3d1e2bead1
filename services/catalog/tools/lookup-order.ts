import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Clock } from '../../../libs/core/clock.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ORDER_STATUSES, type OrdersApi } from '../../downstreams/orders/orders-api.js';
import { callDownstream } from '../downstream-failure.js';
import { centsToDollars } from '../money.js';
import { mayActOnOrder } from '../order-access.js';
import { orderIdField } from './fields.js';

const input = z.strictObject({ order_id: orderIdField });

const output = z.object({
  order_id: z.string(),
  customer_id: z.string(),
  status: z.enum(ORDER_STATUSES),
  placed_at: z.string(),
  currency: z.literal('USD'),
  total: z.number(),
  items: z.array(
    z.object({ sku: z.string(), name: z.string(), quantity: z.number(), unit_price: z.number() }),
  ),
});

export type LookupOrderInput = z.infer<typeof input>;
export type LookupOrderOutput = z.infer<typeof output>;

/**
 * `lookup_order` (read-only): one order's status, items and total. Visible with `orders:read`;
 * allowed only on orders the principal (or the user it acts for) owns, or for support staff.
 * Retried once on a timeout or server error (safe: it changes nothing).
 */
export function lookupOrderTool(deps: {
  readonly orders: OrdersApi;
  readonly clock: Clock;
}): ToolDefinition<LookupOrderInput, LookupOrderOutput> {
  return defineTool({
    name: 'lookup_order',
    version: '1.0.0',
    description:
      "Get one order's status, items, total and owning customer id by its order id. Use it when the customer names a specific order, and before issue_refund to confirm what was paid and that the order was delivered. It only reads. Do NOT use it to find a customer (use search_customers) or to read contact details (use crm_lookup_contact).",
    input,
    output,
    scopes: ['orders:read'],
    owner: 'orders-team',
    stateChanging: false,
    authorize: (principal, args) => mayActOnOrder(deps.orders, deps.clock, principal, args.order_id),
    downstream: 'orders',
    timeoutMs: 2_000,
    retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 500 },
    auditFields: ['order_id'],
    rateLimit: { capacity: 30, refillPerSecond: 5, per: ['principal'] },
    cost: { tokensIn: 60, tokensOut: 120 },
    execute: async (args, inv) => {
      const order = await callDownstream(() =>
        deps.orders.getOrder(inv.ctx.tenant, args.order_id, inv.signal),
      );
      if (order === undefined) {
        // Authorization already proved the order exists; it vanished in between.
        throw new ToolgateError('CALLER_ERROR', `Order ${args.order_id} was not found.`, {
          suggestedFix: 'Ask the customer to confirm the order id.',
        });
      }
      return {
        order_id: order.order_id,
        customer_id: order.customer_id,
        status: order.status,
        placed_at: order.placed_at,
        currency: order.currency,
        total: centsToDollars(order.total_cents),
        items: order.lines.map((line) => ({
          sku: line.sku,
          name: line.name,
          quantity: line.quantity,
          unit_price: centsToDollars(line.unit_price_cents),
        })),
      };
    },
  });
}
