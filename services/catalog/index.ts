/**
 * The store's tool catalog: six core tools over the fake downstream services, the enterprise-pattern
 * tools over their backends, their policy and limits.
 */
export {
  buildStoreCatalog,
  createPostgresStoreCatalog,
  createStoreCatalog,
  storeTools,
  type StoreCatalog,
  type StoreCatalogEnv,
} from './store-catalog.js';
export { loadStoreCatalogConfig, StoreCatalogConfigError, type StoreCatalogConfig } from './config.js';
export {
  legacyFilingClient,
  memoryPatternBackends,
  type FilingBackend,
  type MemoryPatternOptions,
  type PatternBackends,
  type PurchasingBackend,
} from './pattern-backends.js';
export { patternTools } from './pattern-tools.js';
export { createPostgresPatternBackends, DOCUMENT_EXTENSIONS } from './postgres-pattern-backends.js';
export {
  STORE_POLICY,
  STORE_POLICY_CEDAR,
  STORE_POLICY_FACTS,
  STORE_POLICY_VERSION,
} from './store-policy.js';
export { STORE_DOWNSTREAM_LIMITS } from './downstream-limits.js';
export { mayActOnOrder, OWNERSHIP_LOOKUP_MS } from './order-access.js';
export { actingIdentities, crmViewer, hasRole, ORDER_STAFF_ROLES, SUPPORT_ROLE } from './principal-facts.js';
export { centsToDollars, dollarsToCents, formatDollars } from './money.js';
export { lookupOrderTool } from './tools/lookup-order.js';
export { searchCustomersTool, maskEmail } from './tools/search-customers.js';
export { crmLookupContactTool } from './tools/crm-lookup-contact.js';
export { issueRefundTool } from './tools/issue-refund.js';
export { updateInventoryTool, INVENTORY_ROLES } from './tools/update-inventory.js';
export { getWeatherTool } from './tools/get-weather.js';
export { createStoreCatalog as default } from './store-catalog.js';
