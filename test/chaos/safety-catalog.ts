import { createPolicyEngine } from '../../libs/policy/index.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../libs/catalog/catalog.js';
import { SAFETY_LEDGER_DDL, safetyLedgerTools } from './safety-ledger.js';

/**
 * The catalog module executor children of the network scenarios load (TOOLGATE_CATALOG_MODULE): the
 * three retry-safety ledger tools on the executor's own pool. CHAOS_WORK_MS sets each call's work
 * time, CHAOS_TOOL_TIMEOUT_MS the tools' timeout.
 */
const createCatalog: CatalogFactory = async (env) => {
  const pool = await env.postgres();
  await pool.query(SAFETY_LEDGER_DDL);
  const registry = new ToolRegistry();
  for (const tool of safetyLedgerTools(pool, {
    workMs: Number(process.env.CHAOS_WORK_MS ?? '0'),
    timeoutMs: Number(process.env.CHAOS_TOOL_TIMEOUT_MS ?? '3000'),
  }))
    registry.register(tool);
  return { registry, policy: createPolicyEngine({ version: 'chaos' }, []), downstreamLimits: {} };
};

export default createCatalog;
