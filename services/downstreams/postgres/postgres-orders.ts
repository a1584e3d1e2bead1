import type pg from 'pg';
import type { Order, OrderLine, OrderStatus, OrdersApi } from '../orders/orders-api.js';

interface OrderRow {
  tenant: string;
  order_id: string;
  customer_id: string;
  status: OrderStatus;
  placed_at: Date;
  total_cents: number;
  lines: OrderLine[];
}

/** Orders service backed by the `store_orders` table. See {@link OrdersApi}. */
export class PostgresOrders implements OrdersApi {
  constructor(private readonly pool: pg.Pool) {}

  async getOrder(tenant: string, orderId: string): Promise<Order | undefined> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT tenant, order_id, customer_id, status, placed_at, total_cents::int AS total_cents, lines
         FROM store_orders WHERE tenant = $1 AND order_id = $2`,
      [tenant, orderId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { ...row, placed_at: row.placed_at.toISOString(), currency: 'USD' };
  }
}
