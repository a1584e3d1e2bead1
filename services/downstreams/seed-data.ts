import type { CrmContact } from './crm/crm-api.js';
import type { StockLevel } from './inventory/inventory-api.js';
import type { Order } from './orders/orders-api.js';
import type { Charge } from './payments/payments-api.js';
import type { Observation } from './weather/weather-api.js';

/** Everything the fake store starts with. */
export interface StoreSeed {
  readonly customers: readonly CrmContact[];
  readonly orders: readonly Order[];
  readonly charges: readonly Charge[];
  readonly stock: readonly StockLevel[];
  readonly weather: readonly Observation[];
}

/** The tenant of the demo story. */
export const STORE_TENANT = 't1';

const customers: CrmContact[] = [
  {
    tenant: 't1',
    customer_id: 'C-1',
    name: 'Ana Silva',
    email: 'ana.silva@example.com',
    phone: '+1 617 555 0101',
    shipping_address: '12 Elm St, Boston, MA 02110',
    preferred_channel: 'email',
    date_of_birth: '1988-04-12',
    ssn_last4: '4821',
    internal_notes: 'Escalated twice in 2025; goodwill credit approved by M. Reyes.',
    risk_score: 12,
  },
  {
    tenant: 't1',
    customer_id: 'C-2',
    name: 'Ben Okafor',
    email: 'ben.okafor@example.com',
    phone: '+1 206 555 0177',
    shipping_address: '480 Pine Ave, Seattle, WA 98101',
    preferred_channel: 'sms',
    date_of_birth: '1979-11-30',
    ssn_last4: '9034',
    internal_notes: 'Chargeback filed on a 2024 order; watch refunds.',
    risk_score: 57,
  },
  {
    tenant: 't1',
    customer_id: 'C-3',
    name: 'Chloe Martin',
    email: 'chloe.m@example.org',
    phone: '+1 312 555 0142',
    shipping_address: '9 Lake Shore Dr, Chicago, IL 60601',
    preferred_channel: 'phone',
    date_of_birth: '1995-02-03',
    ssn_last4: '1177',
    internal_notes: 'VIP since 2023.',
    risk_score: 3,
  },
  // Same customer id in another tenant: ids are only unique within a tenant.
  {
    tenant: 't2',
    customer_id: 'C-1',
    name: 'Dana Novak',
    email: 'dana@example.net',
    phone: '+49 30 555 0190',
    shipping_address: 'Torstr. 5, 10119 Berlin',
    preferred_channel: 'email',
    date_of_birth: '1990-07-21',
    ssn_last4: '5550',
    internal_notes: 'Tenant t2 pilot customer.',
    risk_score: 20,
  },
];

const orders: Order[] = [
  {
    tenant: 't1',
    order_id: 'O-5512',
    customer_id: 'C-1',
    status: 'delivered',
    placed_at: '2026-11-02T14:31:00.000Z',
    currency: 'USD',
    total_cents: 4999,
    lines: [{ sku: 'SKU-7', name: 'Countertop blender', quantity: 1, unit_price_cents: 4999 }],
  },
  {
    tenant: 't1',
    order_id: 'O-7788',
    customer_id: 'C-2',
    status: 'delivered',
    placed_at: '2026-11-05T09:12:00.000Z',
    currency: 'USD',
    total_cents: 3450,
    lines: [{ sku: 'SKU-12', name: 'Electric kettle', quantity: 1, unit_price_cents: 3450 }],
  },
  {
    tenant: 't1',
    order_id: 'O-9001',
    customer_id: 'C-1',
    status: 'delivered',
    placed_at: '2026-11-10T18:05:00.000Z',
    currency: 'USD',
    total_cents: 51240,
    lines: [
      { sku: 'SKU-21', name: 'Espresso machine', quantity: 1, unit_price_cents: 49990 },
      { sku: 'SKU-3', name: 'Descaler, 2-pack', quantity: 1, unit_price_cents: 1250 },
    ],
  },
  {
    tenant: 't1',
    order_id: 'O-6120',
    customer_id: 'C-3',
    status: 'shipped',
    placed_at: '2026-11-20T11:40:00.000Z',
    currency: 'USD',
    total_cents: 2598,
    lines: [{ sku: 'SKU-3', name: 'Descaler, 2-pack', quantity: 2, unit_price_cents: 1299 }],
  },
  {
    tenant: 't2',
    order_id: 'O-4400',
    customer_id: 'C-1',
    status: 'delivered',
    placed_at: '2026-10-28T08:00:00.000Z',
    currency: 'USD',
    total_cents: 1999,
    lines: [{ sku: 'SKU-7', name: 'Countertop blender (refurbished)', quantity: 1, unit_price_cents: 1999 }],
  },
];

const stock: StockLevel[] = [
  { tenant: 't1', sku: 'SKU-3', name: 'Descaler, 2-pack', on_hand: 120 },
  { tenant: 't1', sku: 'SKU-7', name: 'Countertop blender', on_hand: 40 },
  { tenant: 't1', sku: 'SKU-12', name: 'Electric kettle', on_hand: 25 },
  { tenant: 't1', sku: 'SKU-21', name: 'Espresso machine', on_hand: 6 },
  { tenant: 't2', sku: 'SKU-7', name: 'Countertop blender (refurbished)', on_hand: 3 },
];

const weather: Observation[] = [
  {
    city: 'Boston',
    observed_at: '2026-11-29T23:00:00.000Z',
    temperature_c: 2.5,
    conditions: 'snow',
    wind_kph: 24,
  },
  {
    city: 'Seattle',
    observed_at: '2026-11-29T23:00:00.000Z',
    temperature_c: 8,
    conditions: 'rain',
    wind_kph: 15,
  },
  {
    city: 'Chicago',
    observed_at: '2026-11-29T23:00:00.000Z',
    temperature_c: -1,
    conditions: 'cloudy',
    wind_kph: 31,
  },
  {
    city: 'Lisbon',
    observed_at: '2026-11-29T23:00:00.000Z',
    temperature_c: 14,
    conditions: 'clear',
    wind_kph: 9,
  },
  {
    city: 'Berlin',
    observed_at: '2026-11-29T23:00:00.000Z',
    temperature_c: 3,
    conditions: 'fog',
    wind_kph: 6,
  },
];

/**
 * A fresh deep copy of the seed (tenant t1: customers C-1 Ana, C-2 Ben, C-3 Chloe; orders O-5512
 * (C-1, blender $49.99), O-7788 (C-2, kettle $34.50), O-9001 (C-1, espresso machine line $499.90),
 * O-6120 (C-3); tenant t2 reuses the id C-1 and owns O-4400). Every order's full total is captured,
 * so it is also what can be refunded at most. Deterministic: equal on every call.
 */
export function storeSeed(): StoreSeed {
  return structuredClone({
    customers,
    orders,
    charges: orders.map((o) => ({ tenant: o.tenant, order_id: o.order_id, captured_cents: o.total_cents })),
    stock,
    weather,
  });
}
