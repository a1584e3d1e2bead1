import { createHash } from 'node:crypto';
import type pg from 'pg';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { connectionReset } from '../../services/downstreams/faults.js';
import { ledgerTools } from '../integration/executor/ledger-tools.js';
import { LEDGER_APPEND, type LedgerAppendOutput } from './ledger-append.js';

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
  // The effect is ledger-tools' own `ledger_append`: `workMs` of (abortable) work, then one row.
  const append = ledgerTools(pool, { workMs: options.workMs }).find((t) => t.name === 'ledger_append')!;
  return defineTool({
    name: 'ledger_append',
    ...LEDGER_APPEND,
    timeoutMs: options.timeoutMs ?? 2_000,
    execute: async (args, inv) => {
      const written = (await append.execute(args, inv)) as LedgerAppendOutput;
      if (losesResponse(args.ref, options.losePerMille)) throw connectionReset();
      return written;
    },
  }) as unknown as ToolDefinition;
}
