import type pg from 'pg';
import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { StatusCheckAnswer, ToolDefinition } from '../../../libs/registry/tool-definition.js';

/**
 * A legacy filing service as a Postgres table: no idempotency keys of its own, but a
 * lookup by a reference the client supplies (toolgate's idempotency key). A submission is first
 * `pending`, then `accepted`; the status check reads it: no row → not-applied, pending → unknown,
 * accepted → applied with the filing's confirmation.
 */
export const FILINGS_DDL = `
  CREATE TABLE IF NOT EXISTS filings (
    reference text PRIMARY KEY,
    taxpayer_id text NOT NULL,
    year integer NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'accepted')),
    confirmation text NOT NULL,
    clerk_note text NOT NULL DEFAULT 'internal: not for the model'
  )`;

export const FILING_SCOPE = 'filings:submit';

const input = z.object({ taxpayerId: z.string().min(1), year: z.number().int() });
const output = z.object({ confirmation: z.string(), status: z.string() });

export interface FilingToolOptions {
  /** How long the service takes to accept a submission after it recorded it (default 0). */
  readonly acceptAfterMs?: number;
  /** The client never sees the answer: the call runs into its timeout after the submission. */
  readonly loseAnswer?: boolean;
  /** Counts submissions that reached the service (the tool's effects). */
  readonly submissions?: { count: number };
  readonly timeoutMs?: number;
}

/** Reads a filing by reference. */
export async function filingStatus(pool: pg.Pool, reference: string): Promise<StatusCheckAnswer> {
  const { rows } = await pool.query<{ status: string; confirmation: string; clerk_note: string }>(
    'SELECT status, confirmation, clerk_note FROM filings WHERE reference = $1',
    [reference],
  );
  const row = rows[0];
  if (row === undefined) return { state: 'not-applied' };
  if (row.status === 'pending') return { state: 'unknown' };
  // The raw row: the reconciler must strip what the output schema does not declare (clerk_note).
  return {
    state: 'applied',
    result: { confirmation: row.confirmation, status: row.status, clerk_note: row.clerk_note },
  };
}

/** Records a filing as the service would. */
export async function insertFiling(
  pool: pg.Pool,
  reference: string,
  status: 'pending' | 'accepted',
  taxpayerId = 'TP-1',
): Promise<void> {
  await pool.query(
    `INSERT INTO filings (reference, taxpayer_id, year, status, confirmation) VALUES ($1, $2, 2024, $3, $4)`,
    [reference, taxpayerId, status, `CNF-${reference.slice(-6)}`],
  );
}

/**
 * `submit_filing`: state-changing, retry safety `status-check` (the check above), conflict key
 * `<tenant>:filing:<taxpayer>`, audit allow-list `year` only (the taxpayer id is personal data).
 */
export function filingTool(pool: pg.Pool, options: FilingToolOptions = {}): ToolDefinition {
  return defineTool({
    name: 'submit_filing',
    version: '1.0.0',
    description: 'Submit a tax filing for one taxpayer and year. Not for reading filings.',
    input,
    output,
    scopes: [FILING_SCOPE],
    owner: 'filings-team',
    timeoutMs: options.timeoutMs ?? 2_000,
    auditFields: ['year'],
    conflictKey: (args, ctx) => `${ctx.tenant}:filing:${args.taxpayerId}`,
    downstream: 'filings',
    retrySafety: {
      kind: 'status-check',
      check: (_args, inv) => filingStatus(pool, inv.idempotencyKey),
      apply: async (args, inv) => {
        if (options.submissions) options.submissions.count += 1;
        await insertFiling(pool, inv.idempotencyKey, 'pending', args.taxpayerId);
        const accept = async (): Promise<void> => {
          await pool.query(`UPDATE filings SET status = 'accepted' WHERE reference = $1`, [
            inv.idempotencyKey,
          ]);
        };
        const acceptAfterMs = options.acceptAfterMs ?? 0;
        if (options.loseAnswer) {
          // The service finishes on its own schedule; the client's answer is lost on the way back.
          setTimeout(() => void accept().catch(() => undefined), acceptAfterMs);
          await new Promise<never>((_, reject) => {
            inv.signal.addEventListener('abort', () => reject(inv.signal.reason as Error), { once: true });
          });
        }
        await accept();
        return { confirmation: `CNF-${inv.idempotencyKey.slice(-6)}`, status: 'accepted' };
      },
    },
  }) as unknown as ToolDefinition;
}
