import { createPolicyEngine } from '../../libs/policy/index.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../libs/catalog/catalog.js';
import { LEDGER_DDL } from '../integration/executor/ledger-tools.js';
import { lossyLedgerTool } from './lossy-ledger.js';

/**
 * The catalog module the chaos executor children load (TOOLGATE_CATALOG_MODULE): the lossy ledger
 * on the executor's own pool (its search_path is the test's schema). CHAOS_WORK_MS sets each
 * append's work time, CHAOS_LOSE_PER_MILLE the share of lost responses.
 */
const createCatalog: CatalogFactory = async (env) => {
  const pool = await env.postgres();
  await pool.query(LEDGER_DDL);
  const registry = new ToolRegistry();
  registry.register(
    lossyLedgerTool(pool, {
      workMs: Number(process.env.CHAOS_WORK_MS ?? '0'),
      losePerMille: Number(process.env.CHAOS_LOSE_PER_MILLE ?? '0'),
    }),
  );
  return { registry, policy: createPolicyEngine({ version: 'chaos' }, []), downstreamLimits: {} };
};

export default createCatalog;
