import type pg from 'pg';
import { underSchemaLock } from '../../../libs/adapters/postgres/schema-lock.js';
import type { StoreSeed } from '../seed-data.js';

/**
 * The fake store's own tables. They belong to the downstream services (the payment ledger is written
 * by "payments", never by toolgate), so they live in their own module rather than in toolgate's
 * migrations; every name starts with `store_`.
 */
const STORE_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS store_customers (
  tenant            text    NOT NULL,
  customer_id       text    NOT NULL,
  name              text    NOT NULL,
  email             text    NOT NULL,
  phone             text    NOT NULL,
  shipping_address  text    NOT NULL,
  preferred_channel text    NOT NULL,
  date_of_birth     text    NOT NULL,
  ssn_last4         text    NOT NULL,
  internal_notes    text    NOT NULL,
  risk_score        integer NOT NULL,
  PRIMARY KEY (tenant, customer_id)
);
CREATE TABLE IF NOT EXISTS store_orders (
  tenant      text        NOT NULL,
  order_id    text        NOT NULL,
  customer_id text        NOT NULL,
  status      text        NOT NULL,
  placed_at   timestamptz NOT NULL,
  total_cents bigint      NOT NULL,
  lines       jsonb       NOT NULL,
  PRIMARY KEY (tenant, order_id)
);
CREATE TABLE IF NOT EXISTS store_charges (
  tenant         text   NOT NULL,
  order_id       text   NOT NULL,
  captured_cents bigint NOT NULL,
  PRIMARY KEY (tenant, order_id)
);
CREATE TABLE IF NOT EXISTS store_refunds (
  seq             bigserial   PRIMARY KEY,
  tenant          text        NOT NULL,
  order_id        text        NOT NULL,
  amount_cents    bigint      NOT NULL CHECK (amount_cents > 0),
  reason          text        NOT NULL,
  idempotency_key text        NOT NULL,
  created_at      timestamptz NOT NULL,
  UNIQUE (tenant, idempotency_key)
);
CREATE INDEX IF NOT EXISTS store_refunds_order ON store_refunds (tenant, order_id);
CREATE TABLE IF NOT EXISTS store_stock (
  tenant  text    NOT NULL,
  sku     text    NOT NULL,
  name    text    NOT NULL,
  on_hand integer NOT NULL,
  PRIMARY KEY (tenant, sku)
);
CREATE TABLE IF NOT EXISTS store_stock_movements (
  seq           bigserial   PRIMARY KEY,
  tenant        text        NOT NULL,
  sku           text        NOT NULL,
  delta         integer     NOT NULL,
  reason        text        NOT NULL,
  reference     text        NOT NULL,
  on_hand_after integer     NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS store_stock_movements_reference ON store_stock_movements (tenant, reference);
CREATE TABLE IF NOT EXISTS store_weather (
  city_key      text        PRIMARY KEY,
  city          text        NOT NULL,
  observed_at   timestamptz NOT NULL,
  temperature_c numeric     NOT NULL,
  conditions    text        NOT NULL,
  wind_kph      numeric     NOT NULL
);
`;

/**
 * Creates the store tables in the pool's current schema if they are missing, then inserts the seed
 * rows that are not there yet (existing rows, and everything the services wrote since, are kept).
 * Safe to run concurrently from several processes: one transaction under an advisory lock keyed by
 * the schema name.
 */
export async function ensureStoreSchema(pool: pg.Pool, seed: StoreSeed): Promise<void> {
  await underSchemaLock(pool, 'toolgate.store_schema', async (client) => {
    await client.query(STORE_SCHEMA_SQL);
    for (const c of seed.customers) {
      await client.query(
        `INSERT INTO store_customers (tenant, customer_id, name, email, phone, shipping_address,
           preferred_channel, date_of_birth, ssn_last4, internal_notes, risk_score)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
        [
          c.tenant,
          c.customer_id,
          c.name,
          c.email,
          c.phone,
          c.shipping_address,
          c.preferred_channel,
          c.date_of_birth,
          c.ssn_last4,
          c.internal_notes,
          c.risk_score,
        ],
      );
    }
    for (const o of seed.orders) {
      await client.query(
        `INSERT INTO store_orders (tenant, order_id, customer_id, status, placed_at, total_cents, lines)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [o.tenant, o.order_id, o.customer_id, o.status, o.placed_at, o.total_cents, JSON.stringify(o.lines)],
      );
    }
    for (const c of seed.charges) {
      await client.query(
        'INSERT INTO store_charges (tenant, order_id, captured_cents) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [c.tenant, c.order_id, c.captured_cents],
      );
    }
    for (const s of seed.stock) {
      await client.query(
        'INSERT INTO store_stock (tenant, sku, name, on_hand) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [s.tenant, s.sku, s.name, s.on_hand],
      );
    }
    for (const w of seed.weather) {
      await client.query(
        `INSERT INTO store_weather (city_key, city, observed_at, temperature_c, conditions, wind_kph)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [w.city.toLowerCase(), w.city, w.observed_at, w.temperature_c, w.conditions, w.wind_kph],
      );
    }
  });
}
