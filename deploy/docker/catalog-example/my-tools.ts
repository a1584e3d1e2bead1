/**
 * An example catalog for the image of your own tools (deploy/docker/README.md): one read-only tool
 * and one that changes state. The executor loads it with
 * `toolgate executor --catalog /app/catalog/my-tools.ts`; replace the tools with yours.
 */
import { callerError, defineTool } from 'toolgate';
import { defineCatalog } from 'toolgate/executor';
import { z } from 'zod';

/** Stands in for your own service; a real tool calls it over the network. */
interface Order {
  status: 'paid' | 'cancelled';
  amountCents: number;
}
const orders = new Map<string, Order>([['O-1', { status: 'paid', amountCents: 4_200 }]]);

export const lookupOrder = defineTool({
  name: 'lookup_order',
  version: '1.0.0',
  description: 'Looks up an order by its id (O-<number>): status and amount.',
  input: z.object({ order_id: z.string().regex(/^O-\d+$/) }),
  output: z.object({ order_id: z.string(), status: z.enum(['paid', 'cancelled']), amount_cents: z.number() }),
  scopes: ['orders:read'],
  owner: 'shop',
  stateChanging: false,
  async execute({ order_id }) {
    const order = orders.get(order_id);
    if (order === undefined) throw callerError(`There is no order ${order_id}.`);
    return { order_id, status: order.status, amount_cents: order.amountCents };
  },
});

export const cancelOrder = defineTool({
  name: 'cancel_order',
  version: '1.0.0',
  description: 'Cancels a paid order.',
  input: z.object({ order_id: z.string().regex(/^O-\d+$/), reason: z.string().min(3) }),
  output: z.object({ order_id: z.string(), status: z.literal('cancelled') }),
  scopes: ['orders:write'],
  owner: 'shop',
  // Calls for the same order run one at a time, in order.
  conflictKey: (args) => `order:${args.order_id}`,
  async execute({ order_id }) {
    const order = orders.get(order_id);
    if (order === undefined) throw callerError(`There is no order ${order_id}.`);
    order.status = 'cancelled';
    return { order_id, status: 'cancelled' as const };
  },
});

export default defineCatalog({ tools: [lookupOrder, cancelOrder] });
