import type pg from 'pg';
import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';

/**
 * Tools whose effects are rows in a Postgres ledger, so a test can count effects exactly (one row
 * per tool invocation — nothing in the ledger deduplicates) and read their order. Shared by the
 * in-process tests and by the catalog module the executor child processes load.
 */

export const LEDGER_DDL = `
  CREATE TABLE IF NOT EXISTS ledger (
    id bigserial PRIMARY KEY,
    key text NOT NULL,
    seq integer NOT NULL,
    call_ref text NOT NULL,
    pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

export const TOOL_SCOPE = 'ledger:write';

const appendInput = z.object({
  key: z.string().min(1),
  seq: z.number().int().nonnegative(),
  /** The call id, echoed so a ledger row can be matched to its call. */
  ref: z.string().min(1),
});
const appendOutput = z.object({ key: z.string(), seq: z.number().int(), row: z.number().int() });

export interface LedgerToolOptions {
  /** Work time per invocation before the row is written (default 0). */
  readonly workMs?: number;
}

/**
 * `ledger_append`: state-changing, retrySafety none — an unknown outcome is UNRESOLVED, never
 * repeated — and conflict key `<tenant>:ledger:<key>`, so calls on one key serialize.
 * `slow_append`: the same effect, but it works for 3 s against a 300 ms timeout.
 */
export function ledgerTools(pool: pg.Pool, options: LedgerToolOptions = {}): ToolDefinition[] {
  const append = (name: string, workMs: number, timeoutMs: number) =>
    defineTool({
      name,
      version: '1.0.0',
      description: 'Append one entry to the ledger of a key. Not for reading the ledger.',
      input: appendInput,
      output: appendOutput,
      scopes: [TOOL_SCOPE],
      owner: 'ledger-team',
      timeoutMs,
      auditFields: ['key', 'seq'],
      conflictKey: (args, ctx) => `${ctx.tenant}:ledger:${args.key}`,
      downstream: 'ledger-db',
      execute: async (args, inv) => {
        if (workMs > 0) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, workMs);
            inv.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              reject(inv.signal.reason as Error);
            });
          });
        }
        const { rows } = await pool.query<{ id: string }>(
          'INSERT INTO ledger (key, seq, call_ref, pid) VALUES ($1, $2, $3, $4) RETURNING id',
          [args.key, args.seq, args.ref, process.pid],
        );
        return { key: args.key, seq: args.seq, row: Number(rows[0]!.id) };
      },
    }) as unknown as ToolDefinition;
  return [append('ledger_append', options.workMs ?? 0, 2_000), append('slow_append', 3_000, 300)];
}

export interface LedgerRow {
  readonly id: number;
  readonly key: string;
  readonly seq: number;
  readonly callRef: string;
  readonly pid: number;
}

export async function ledgerRows(pool: pg.Pool): Promise<LedgerRow[]> {
  const { rows } = await pool.query<{ id: string; key: string; seq: number; call_ref: string; pid: number }>(
    'SELECT id, key, seq, call_ref, pid FROM ledger ORDER BY id',
  );
  return rows.map((r) => ({ id: Number(r.id), key: r.key, seq: r.seq, callRef: r.call_ref, pid: r.pid }));
}
