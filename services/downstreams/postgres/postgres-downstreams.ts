import type pg from 'pg';
import { storeSeed } from '../seed-data.js';
import { withFaultInjectors, type DownstreamOptions, type StoreDownstreams } from '../store-downstreams.js';
import { PostgresCrm } from './postgres-crm.js';
import { PostgresInventory } from './postgres-inventory.js';
import { PostgresOrders } from './postgres-orders.js';
import { PostgresPayments } from './postgres-payments.js';
import { PostgresWeather } from './postgres-weather.js';
import { ensureStoreSchema } from './store-schema.js';

export interface PostgresDownstreamOptions extends DownstreamOptions {
  /** End the pool on `close` (when the caller handed its only reference over). Default false. */
  readonly ownsPool?: boolean;
}

/**
 * The fake store in Postgres (integration tests, chaos, the Kafka demo): creates and seeds the
 * `store_*` tables in the pool's schema if needed (see {@link ensureStoreSchema}), so several
 * executors pointed at one database share one ledger, one stock table and one CRM.
 */
export async function createPostgresDownstreams(
  pool: pg.Pool,
  options: PostgresDownstreamOptions,
): Promise<StoreDownstreams> {
  await ensureStoreSchema(pool, options.seed ?? storeSeed());
  return withFaultInjectors(
    {
      payments: new PostgresPayments(pool, options.clock),
      orders: new PostgresOrders(pool),
      inventory: new PostgresInventory(pool, options.clock, options.betweenReadAndWrite),
      crm: new PostgresCrm(pool),
      weather: new PostgresWeather(pool),
    },
    options.clock,
    options.faultSeed ?? 1,
    async () => {
      if (options.ownsPool === true) await pool.end();
    },
  );
}
