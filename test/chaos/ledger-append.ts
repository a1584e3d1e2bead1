import { z } from 'zod';
import type { ExecutionContext } from '../../libs/core/types.js';
import { TOOL_SCOPE } from '../integration/executor/ledger-tools.js';

// Strict and bounded, as catalog tools are: extra fields (say, an `approved_by` the model made up)
// and oversized strings are refused at the schema stage.
const input = z.strictObject({
  key: z.string().min(1).max(200),
  seq: z.number().int().nonnegative(),
  ref: z.string().min(1).max(300),
});
const output = z.object({ key: z.string(), seq: z.number().int(), row: z.number().int() });

/** The arguments of a chaos ledger tool: the ledger's key, a sequence number and the call's ref. */
export type LedgerAppendArgs = z.infer<typeof input>;
/** What a chaos ledger tool answers: the key and sequence number, and the row of the effect. */
export type LedgerAppendOutput = z.infer<typeof output>;

/**
 * What every chaos ledger tool (`lossyLedgerTool`, `safetyLedgerTools`) declares alike — all but
 * its name, timeout, retry safety, rate limit and `execute`: version 1.0.0, the append
 * description, the strict bounded schemas above, scope {@link TOOL_SCOPE}, owner `ledger-team`,
 * `key` and `seq` audited, serialized per `<tenant>:ledger:<key>`, downstream `ledger-db`.
 */
export const LEDGER_APPEND = {
  version: '1.0.0',
  description: 'Append one entry to the ledger of a key. Not for reading the ledger.',
  input,
  output,
  scopes: [TOOL_SCOPE],
  owner: 'ledger-team',
  auditFields: ['key', 'seq'],
  conflictKey: (args: LedgerAppendArgs, ctx: ExecutionContext): string => `${ctx.tenant}:ledger:${args.key}`,
  downstream: 'ledger-db',
} as const;
