import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import { createPolicyEngine } from '../../libs/policy/policy-engine.js';
import type { Clock } from '../../libs/core/clock.js';
import type { BucketLimit } from '../../libs/ports/rate-limiter.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { CatalogEnv, CatalogFactory } from '../../libs/catalog/catalog.js';
import { createPostgresDownstreams } from '../downstreams/postgres/postgres-downstreams.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import { loadStoreCatalogConfig, type StoreCatalogConfig } from './config.js';
import { STORE_DOWNSTREAM_LIMITS } from './downstream-limits.js';
import { memoryPatternBackends, type PatternBackends } from './pattern-backends.js';
import { patternTools } from './pattern-tools.js';
import { createPostgresPatternBackends } from './postgres-pattern-backends.js';
import { STORE_POLICY } from './store-policy.js';
import { crmLookupContactTool } from './tools/crm-lookup-contact.js';
import { getWeatherTool } from './tools/get-weather.js';
import { issueRefundTool } from './tools/issue-refund.js';
import { lookupOrderTool } from './tools/lookup-order.js';
import { searchCustomersTool } from './tools/search-customers.js';
import { updateInventoryTool } from './tools/update-inventory.js';

/**
 * The store's catalog: what the executor's `Catalog` contract asks for (registry, policy, outbound
 * limits, close) plus the downstream services and pattern backends behind the tools, for tests, the
 * demo and operators (the payment ledger, fault switches, preview approvals, placed orders).
 */
export interface StoreCatalog {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  readonly downstreamLimits: Readonly<Record<string, BucketLimit>>;
  readonly downstreams: StoreDownstreams;
  /** The job store, purchasing service, single-use store and the optional tools' backends. */
  readonly patterns: PatternBackends;
  close(): Promise<void>;
}

/** The store's six core tools, each bound to the downstream services it calls. */
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
 * Builds the whole store-support catalog over given downstream services and pattern backends: the
 * six core tools, the report-job trio, and — when their backends are configured — the
 * purchase-order pair (`preview_purchase_order`, `create_purchase_order`), `submit_filing`,
 * `read_document` and `run_report_query` (see {@link patternTools}). `patterns` defaults to
 * {@link memoryPatternBackends} (embedded mode, demos, unit tests: the purchase-order pair with a
 * random preview key; no filing, documents or report queries). `close` closes the pattern backends,
 * then the downstreams.
 */
export function buildStoreCatalog(
  downstreams: StoreDownstreams,
  clock: Clock,
  patterns: PatternBackends = memoryPatternBackends(clock),
): StoreCatalog {
  const registry = new ToolRegistry();
  const tools = [
    ...storeTools(downstreams, clock),
    ...patternTools(patterns, downstreams, clock, () => STORE_POLICY.version),
  ];
  const policy = createPolicyEngine(STORE_POLICY, tools);
  for (const tool of tools) registry.register(tool);
  let closing: Promise<void> | undefined;
  return {
    registry,
    policy,
    downstreamLimits: STORE_DOWNSTREAM_LIMITS,
    downstreams,
    patterns,
    close() {
      closing ??= patterns.close().finally(() => downstreams.close());
      return closing;
    },
  };
}

/** What the executor hands a catalog factory; it owns (and ends) the Postgres pool. */
export type StoreCatalogEnv = CatalogEnv;

/**
 * The store catalog in server mode, over `config` (see {@link StoreCatalogConfig}): the fake
 * services in Postgres in the pool's schema, created and seeded on first use (several executors
 * share one ledger), and the Postgres pattern backends ({@link createPostgresPatternBackends}:
 * migrations, purchasing tables). Registered: the six core tools and the report-job trio always;
 * the purchase-order pair only with a preview secret; `submit_filing` only with a legacy filing URL;
 * `read_document` only with a documents root; `run_report_query` only with a reports database.
 * Rejects when the database cannot be prepared. `close` leaves the pool to its owner.
 */
export async function createPostgresStoreCatalog(
  env: CatalogEnv,
  config: StoreCatalogConfig,
): Promise<StoreCatalog> {
  const pool = await env.postgres();
  const downstreams = await createPostgresDownstreams(pool, { clock: env.clock });
  let patterns: PatternBackends;
  try {
    patterns = await createPostgresPatternBackends(pool, env.clock, config);
  } catch (err) {
    await downstreams.close();
    throw err;
  }
  return buildStoreCatalog(downstreams, env.clock, patterns);
}

/**
 * The executor's catalog factory (a `CatalogFactory`, loaded by name from services/catalog):
 * {@link createPostgresStoreCatalog} with the settings of {@link loadStoreCatalogConfig} from the
 * process environment (TOOLGATE_PREVIEW_SECRET, LEGACY_FILING_URL, TOOLGATE_DOCUMENTS_ROOT,
 * TOOLGATE_REPORTS_DATABASE_URL, TOOLGATE_REPORTS_SCHEMA; all optional). Rejects on a setting that is
 * set but unusable, or when the database cannot be prepared.
 */
export const createStoreCatalog = (async (env: CatalogEnv): Promise<StoreCatalog> =>
  createPostgresStoreCatalog(env, loadStoreCatalogConfig())) satisfies CatalogFactory;
