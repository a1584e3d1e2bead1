import type pg from 'pg';
import { z } from 'zod';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../../libs/catalog/catalog.js';
import { LEDGER_DDL, TOOL_SCOPE } from './ledger-tools.js';

/**
 * `timed_append`: the ledger's append whose work time the call itself names (`workMs`, up to
 * 10 s, within a 15 s timeout), so one test can run a slow call beside quick ones on one
 * executor. Same conflict key as `ledger_append`: calls on one ledger key serialize.
 */
export function timedAppend(pool: pg.Pool): ToolDefinition {
  return defineTool({
    name: 'timed_append',
    version: '1.0.0',
    description: 'Append one entry to the ledger of a key after working for workMs. Not for reading.',
    input: z.object({
      key: z.string().min(1),
      seq: z.number().int().nonnegative(),
      ref: z.string().min(1),
      workMs: z.number().int().min(0).max(10_000),
    }),
    output: z.object({ key: z.string(), seq: z.number().int(), row: z.number().int() }),
    scopes: [TOOL_SCOPE],
    owner: 'ledger-team',
    timeoutMs: 15_000,
    auditFields: ['key', 'seq', 'workMs'],
    conflictKey: (args, ctx) => `${ctx.tenant}:ledger:${args.key}`,
    downstream: 'ledger-db',
    execute: async (args, inv) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.workMs);
        inv.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(inv.signal.reason as Error);
        });
      });
      const { rows } = await pool.query<{ id: string }>(
        'INSERT INTO ledger (key, seq, call_ref, pid) VALUES ($1, $2, $3, $4) RETURNING id',
        [args.key, args.seq, args.ref, process.pid],
      );
      return { key: args.key, seq: args.seq, row: Number(rows[0]!.id) };
    },
  }) as unknown as ToolDefinition;
}

/** The catalog module an executor process loads (TOOLGATE_CATALOG_MODULE) for `timed_append`. */
const createCatalog: CatalogFactory = async (env) => {
  const pool = await env.postgres();
  await pool.query(LEDGER_DDL);
  const registry = new ToolRegistry();
  registry.register(timedAppend(pool));
  return { registry, policy: createPolicyEngine({ version: 'timed-test' }, []), downstreamLimits: {} };
};

export default createCatalog;
