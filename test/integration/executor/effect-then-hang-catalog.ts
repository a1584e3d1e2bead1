import { z } from 'zod';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../../libs/catalog/catalog.js';
import { LEDGER_DDL, TOOL_SCOPE } from './ledger-tools.js';

/**
 * The catalog module of an executor child that dies between the effect and the answer: its
 * `ledger_append` writes the ledger row and then works on until the tool's timeout
 * (HANG_TOOL_TIMEOUT_MS, default 4 000), so a test can SIGKILL the process while the effect exists
 * and no result, audit record or completed claim does. Same name, input and scope as the ledger
 * tools of the in-process executor that takes the call over.
 */
const createCatalog: CatalogFactory = async (env) => {
  const pool = await env.postgres();
  await pool.query(LEDGER_DDL);
  const tool = defineTool({
    name: 'ledger_append',
    version: '1.0.0',
    description: 'Append one entry to the ledger of a key, then hang.',
    input: z.object({ key: z.string().min(1), seq: z.number().int().nonnegative(), ref: z.string().min(1) }),
    output: z.object({ key: z.string(), seq: z.number().int(), row: z.number().int() }),
    scopes: [TOOL_SCOPE],
    owner: 'ledger-team',
    timeoutMs: Number(process.env.HANG_TOOL_TIMEOUT_MS ?? '4000'),
    auditFields: ['key', 'seq'],
    conflictKey: (args, ctx) => `${ctx.tenant}:ledger:${args.key}`,
    downstream: 'ledger-db',
    execute: async (args, inv) => {
      await pool.query('INSERT INTO ledger (key, seq, call_ref, pid) VALUES ($1, $2, $3, $4)', [
        args.key,
        args.seq,
        args.ref,
        process.pid,
      ]);
      return new Promise<never>((_, reject) => {
        inv.signal.addEventListener('abort', () => reject(inv.signal.reason as Error));
      });
    },
  }) as unknown as ToolDefinition;
  const registry = new ToolRegistry();
  registry.register(tool);
  return { registry, policy: createPolicyEngine({ version: 'hang-test' }, []), downstreamLimits: {} };
};

export default createCatalog;
