import type { Principal } from '../../libs/core/types.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Order, OrdersApi } from '../downstreams/orders/orders-api.js';
import { boundedCall } from './bounded-call.js';
import { actingIdentities, hasRole, ORDER_STAFF_ROLES } from './principal-facts.js';

/** How long an ownership lookup may take before authorization gives up (fails closed). */
export const OWNERSHIP_LOOKUP_MS = 1_000;

/**
 * The resource rule of the order tools: the order must exist in the principal's tenant
 * and either belong to the principal or the user it acts for, or the principal must hold a staff
 * role ({@link ORDER_STAFF_ROLES}: support, manager). Every fact comes from the verified principal and the orders service; the call's
 * arguments only name the order. An unknown order is simply "not allowed", so the answer never tells
 * a prober which order ids exist. Rejects (and authorization then fails closed) when the orders
 * service fails or does not answer within {@link OWNERSHIP_LOOKUP_MS}.
 */
export async function mayActOnOrder(
  orders: OrdersApi,
  clock: Clock,
  principal: Principal,
  orderId: string,
): Promise<boolean> {
  const order = await boundedCall(clock, OWNERSHIP_LOOKUP_MS, (signal) =>
    orders.getOrder(principal.tenant, orderId, signal),
  );
  return order !== undefined && isAllowed(principal, order);
}

function isAllowed(principal: Principal, order: Order): boolean {
  if (order.tenant !== principal.tenant) return false;
  return (
    actingIdentities(principal).includes(order.customer_id) ||
    ORDER_STAFF_ROLES.some((role) => hasRole(principal, role))
  );
}
