import { createPolicyEngine } from '../../../libs/policy/index.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../../libs/catalog/catalog.js';
import { LEDGER_DDL, ledgerTools } from './ledger-tools.js';

/**
 * The catalog module the executor child processes load (TOOLGATE_CATALOG_MODULE): the ledger tools
 * on the executor's own pool, whose search_path is the test's schema. LEDGER_WORK_MS sets each
 * append's work time.
 */
const createCatalog: CatalogFactory = async (env) => {
  const pool = await env.postgres();
  await pool.query(LEDGER_DDL);
  const registry = new ToolRegistry();
  for (const tool of ledgerTools(pool, { workMs: Number(process.env.LEDGER_WORK_MS ?? '0') })) {
    registry.register(tool);
  }
  return { registry, policy: createPolicyEngine({ version: 'ledger-test' }, []), downstreamLimits: {} };
};

export default createCatalog;
