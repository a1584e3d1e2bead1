/** Lifecycle of an order in the store. */
export const ORDER_STATUSES = ['placed', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** One line of an order, as the orders service's JSON API returns it. */
export interface OrderLine {
  readonly sku: string;
  readonly name: string;
  readonly quantity: number;
  readonly unit_price_cents: number;
}

/** An order record. `customer_id` and `tenant` are the ownership facts authorization reads. */
export interface Order {
  readonly tenant: string;
  readonly order_id: string;
  readonly customer_id: string;
  readonly status: OrderStatus;
  /** ISO 8601, UTC. */
  readonly placed_at: string;
  readonly currency: 'USD';
  readonly total_cents: number;
  readonly lines: readonly OrderLine[];
}

/**
 * The orders service (read-only for toolgate). `getOrder` resolves `undefined` for an order that
 * does not exist in that tenant (never another tenant's order), and rejects only when the service
 * fails (DownstreamError 5xx, a timeout, or the signal's reason).
 */
export interface OrdersApi {
  getOrder(tenant: string, orderId: string, signal?: AbortSignal): Promise<Order | undefined>;
}
