/** The fake store's downstream services (payments, orders, inventory, CRM, weather) and their faults. */
export { DownstreamError, isDownstreamError } from './downstream-error.js';
export {
  FaultInjector,
  connectionReset,
  type Fault,
  type FaultRates,
  type FaultInjectorOptions,
} from './faults.js';
export { withFaults } from './with-faults.js';
export { seededRandom } from './seeded-random.js';
export { storeSeed, STORE_TENANT, type StoreSeed } from './seed-data.js';
export {
  DOWNSTREAM_NAMES,
  withFaultInjectors,
  type DownstreamName,
  type DownstreamOptions,
  type RawDownstreams,
  type StoreDownstreams,
} from './store-downstreams.js';
export { createMemoryDownstreams } from './memory-downstreams.js';
export {
  createPostgresDownstreams,
  type PostgresDownstreamOptions,
} from './postgres/postgres-downstreams.js';
export { ensureStoreSchema } from './postgres/store-schema.js';
export type * from './orders/orders-api.js';
export type * from './payments/payments-api.js';
export type * from './inventory/inventory-api.js';
export type * from './crm/crm-api.js';
export type * from './weather/weather-api.js';
export { ORDER_STATUSES } from './orders/orders-api.js';
export { REFUND_REASONS } from './payments/payments-api.js';
export { ADJUSTMENT_REASONS } from './inventory/inventory-api.js';
export { CONTACT_CHANNELS, CUSTOMER_SEARCH_FIELDS } from './crm/crm-api.js';
export { WEATHER_CONDITIONS } from './weather/weather-api.js';
export { nextTurn, type BetweenReadAndWrite } from './inventory/race-window.js';
