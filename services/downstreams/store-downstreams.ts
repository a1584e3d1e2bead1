import type { Clock } from '../../libs/core/clock.js';
import type { CrmApi } from './crm/crm-api.js';
import { FaultInjector } from './faults.js';
import type { BetweenReadAndWrite } from './inventory/race-window.js';
import type { InventoryApi } from './inventory/inventory-api.js';
import type { OrdersApi } from './orders/orders-api.js';
import type { PaymentsApi } from './payments/payments-api.js';
import type { StoreSeed } from './seed-data.js';
import type { WeatherApi } from './weather/weather-api.js';
import { withFaults } from './with-faults.js';

/** The downstream names, which are also the breaker and outbound-limiter groups of the tools. */
export const DOWNSTREAM_NAMES = ['payments', 'orders', 'inventory', 'crm', 'weather'] as const;
export type DownstreamName = (typeof DOWNSTREAM_NAMES)[number];

/**
 * The fake store's services as the tools see them, each behind a {@link FaultInjector} (in `faults`,
 * by name) that counts requests and can fail, hang, slow down or lose answers on command. The
 * payment ledger (`payments.ledger`) is the ground truth of money moved.
 */
export interface StoreDownstreams {
  readonly payments: PaymentsApi;
  readonly orders: OrdersApi;
  readonly inventory: InventoryApi;
  readonly crm: CrmApi;
  readonly weather: WeatherApi;
  readonly faults: Readonly<Record<DownstreamName, FaultInjector>>;
  /** Releases what the services hold (a pool they own); idempotent. */
  close(): Promise<void>;
}

export interface DownstreamOptions {
  readonly clock: Clock;
  /** Default: {@link storeSeed}(). */
  readonly seed?: StoreSeed;
  /** Seed of the fault injectors' rate draws (each downstream gets its own stream). Default 1. */
  readonly faultSeed?: number;
  /** The gap in inventory's read-modify-write (tests hold it open to force a race). */
  readonly betweenReadAndWrite?: BetweenReadAndWrite;
}

/** The raw services, before faults are put in front of them. */
export interface RawDownstreams {
  readonly payments: PaymentsApi;
  readonly orders: OrdersApi;
  readonly inventory: InventoryApi;
  readonly crm: CrmApi;
  readonly weather: WeatherApi;
}

/**
 * Puts one fault injector in front of each service. Faulted operations are the ones tools call
 * (`refund`, `findRefund`, `getOrder`, `getStock`, `adjust`, `findMovement`, `searchCustomers`,
 * `getContact`, `current`); `payments.ledger` is the operator's view and is never faulted.
 */
export function withFaultInjectors(
  raw: RawDownstreams,
  clock: Clock,
  faultSeed: number,
  close: () => Promise<void>,
): StoreDownstreams {
  const injector = (offset: number) => new FaultInjector({ clock, seed: faultSeed + offset });
  const faults = {
    payments: injector(0),
    orders: injector(1),
    inventory: injector(2),
    crm: injector(3),
    weather: injector(4),
  };
  let closed: Promise<void> | undefined;
  return {
    payments: withFaults(raw.payments, faults.payments, ['refund', 'findRefund']),
    orders: withFaults(raw.orders, faults.orders, ['getOrder']),
    inventory: withFaults(raw.inventory, faults.inventory, ['getStock', 'adjust', 'findMovement']),
    crm: withFaults(raw.crm, faults.crm, ['searchCustomers', 'getContact']),
    weather: withFaults(raw.weather, faults.weather, ['current']),
    faults,
    close: () => (closed ??= close()),
  };
}
