import { createHash } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { connectionReset } from '../../services/downstreams/faults.js';
import { TOOL_SCOPE } from '../integration/executor/ledger-tools.js';

/**
 * The chaos downstream: `ledger_append` writes one row per invocation into the Postgres ledger of
 * test/integration/executor/ledger-tools.ts (nothing there deduplicates, so rows = real effects),
 * and loses the response of a fixed share of calls AFTER the row is written: the connection resets,
 * which toolgate must report as UNRESOLVED (the outcome is unknown to it), never as failed.
 *
 * Which calls lose their response is a pure function of the call ref, so the test knows the set in
 * advance and the same call loses its answer on every delivery.
 */
export function losesResponse(ref: string, perMille: number): boolean {
  if (perMille <= 0) return false;
  const h = createHash('sha256').update(ref).digest();
  return h.readUInt32BE(0) % 100_000 < perMille * 100;
}

// Strict and bounded, as catalog tools are: extra fields (say, an `approved_by` the model made up)
// and oversized strings are refused at the schema stage.
const input = z.strictObject({
  key: z.string().min(1).max(200),
  seq: z.number().int().nonnegative(),
  ref: z.string().min(1).max(300),
});
const output = z.object({ key: z.string(), seq: z.number().int(), row: z.number().int() });

export interface LossyLedgerOptions {
  /** Work time before the row is written. */
  readonly workMs: number;
  /** Responses lost per thousand calls (0.4% = 4). */
  readonly losePerMille: number;
  /** Tool timeout. */
  readonly timeoutMs?: number;
}

/** `ledger_append` over `pool` with response loss; state-changing, serialized per key. */
export function lossyLedgerTool(pool: pg.Pool, options: LossyLedgerOptions): ToolDefinition {
  return defineTool({
    name: 'ledger_append',
    version: '1.0.0',
    description: 'Append one entry to the ledger of a key. Not for reading the ledger.',
    input,
    output,
    scopes: [TOOL_SCOPE],
    owner: 'ledger-team',
    timeoutMs: options.timeoutMs ?? 2_000,
    auditFields: ['key', 'seq'],
    conflictKey: (args, ctx) => `${ctx.tenant}:ledger:${args.key}`,
    downstream: 'ledger-db',
    execute: async (args, inv) => {
      if (options.workMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, options.workMs);
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
      if (losesResponse(args.ref, options.losePerMille)) throw connectionReset();
      return { key: args.key, seq: args.seq, row: Number(rows[0]!.id) };
    },
  }) as unknown as ToolDefinition;
}
