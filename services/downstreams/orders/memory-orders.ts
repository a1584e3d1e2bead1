import type { Order, OrdersApi } from './orders-api.js';

/** In-process orders service over a fixed list of orders. See {@link OrdersApi}. */
export class MemoryOrders implements OrdersApi {
  readonly #orders = new Map<string, Order>();

  constructor(orders: readonly Order[]) {
    for (const order of orders) this.#orders.set(key(order.tenant, order.order_id), structuredClone(order));
  }

  async getOrder(tenant: string, orderId: string): Promise<Order | undefined> {
    const order = this.#orders.get(key(tenant, orderId));
    return order === undefined ? undefined : structuredClone(order);
  }
}

const key = (tenant: string, orderId: string): string => `${tenant}\u0000${orderId}`;
