import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import { createPolicyEngine } from '../../libs/policy/policy-engine.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { BucketLimit } from '../../libs/ports/rate-limiter.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { CatalogEnv, CatalogFactory } from '../executor/catalog.js';
import { createPostgresDownstreams } from '../downstreams/postgres/postgres-downstreams.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import { STORE_DOWNSTREAM_LIMITS } from './downstream-limits.js';
import { STORE_POLICY_RULES, STORE_POLICY_VERSION } from './store-policy.js';
import { crmLookupContactTool } from './tools/crm-lookup-contact.js';
import { getWeatherTool } from './tools/get-weather.js';
import { issueRefundTool } from './tools/issue-refund.js';
import { lookupOrderTool } from './tools/lookup-order.js';
import { searchCustomersTool } from './tools/search-customers.js';
import { updateInventoryTool } from './tools/update-inventory.js';

/**
 * The store's catalog: what the executor's `Catalog` contract asks for (registry, policy, outbound
 * limits, close) plus the downstream services behind the tools, for tests, the demo and operators
 * (the payment ledger, fault switches).
 */
export interface StoreCatalog {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  readonly downstreamLimits: Readonly<Record<string, BucketLimit>>;
  readonly downstreams: StoreDownstreams;
  close(): Promise<void>;
}

/** The store's tools, each bound to the downstream services it calls. */
export function storeTools(downstreams: StoreDownstreams, clock: Clock): ToolDefinition[] {
  const { orders, payments, inventory, crm, weather } = downstreams;
  return [
    lookupOrderTool({ orders, clock }),
    searchCustomersTool({ crm, clock }),
    crmLookupContactTool({ crm, clock }),
    issueRefundTool({ orders, payments, clock }),
    updateInventoryTool({ inventory }),
    getWeatherTool({ weather }),
  ] as ToolDefinition[];
}

/**
 * Builds the store catalog over given downstream services (in-memory for embedded mode and unit
 * tests, Postgres for the servers). `close` closes the downstreams.
 */
export function buildStoreCatalog(downstreams: StoreDownstreams, clock: Clock): StoreCatalog {
  const registry = new ToolRegistry();
  for (const tool of storeTools(downstreams, clock)) registry.register(tool);
  return {
    registry,
    policy: createPolicyEngine(STORE_POLICY_RULES, STORE_POLICY_VERSION),
    downstreamLimits: STORE_DOWNSTREAM_LIMITS,
    downstreams,
    close: () => downstreams.close(),
  };
}

/** What the executor hands a catalog factory; it owns (and ends) the pool. */
export type StoreCatalogEnv = CatalogEnv;

/**
 * The executor's catalog factory (a `CatalogFactory`, loaded by name from services/catalog): the
 * store's tools over Postgres-backed fake services in the pool's schema, created and seeded on
 * first use (several executors share one ledger). Rejects when the database cannot be prepared.
 * `close` leaves the pool to its owner.
 */
export const createStoreCatalog = (async (env: CatalogEnv): Promise<StoreCatalog> => {
  const downstreams = await createPostgresDownstreams(env.pool, { clock: env.clock });
  return buildStoreCatalog(downstreams, env.clock);
}) satisfies CatalogFactory;
