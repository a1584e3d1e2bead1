import type pg from 'pg';
import { defineTool } from '../../libs/registry/define-tool.js';
import type { RetrySafety, ToolDefinition } from '../../libs/registry/tool-definition.js';
import { LEDGER_APPEND, type LedgerAppendArgs } from './ledger-append.js';

/**
 * A fake downstream with one tool per retry-safety kind, so a scenario can check each kind's
 * promise under the same faults. Every invocation appends an `effect_invocations` row (nothing
 * dedupes it: it counts how often the tool really ran); the effect itself is an `effects` row:
 *
 * - `append_plain` (retrySafety none): always a new effect row — a second run is a second effect;
 * - `append_keyed` (forwards-key): the downstream dedupes on the forwarded idempotency key (a unique
 *   column), as a payment API does: a second run returns the first effect's row;
 * - `append_checked` (status-check): always a new effect row, but the status check finds the
 *   effect of a call by its ref, so a take-over that asks first does not repeat it. Its apply is one
 *   statement that does its work at the database and never calls `assertLive()`: what keeps it at
 *   one effect is the executor's own fence.
 *
 * All three are state-changing, serialized per `key`, and spend from a generous per-tenant rate
 * limit (so every call also takes from the shared limiter in Redis).
 */
export const SAFETY_LEDGER_DDL = `
  CREATE TABLE IF NOT EXISTS effects (
    id bigserial PRIMARY KEY,
    tool text NOT NULL,
    key text NOT NULL,
    seq integer NOT NULL,
    call_ref text NOT NULL,
    idem_key text UNIQUE,
    pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE TABLE IF NOT EXISTS effect_invocations (
    id bigserial PRIMARY KEY,
    tool text NOT NULL,
    call_ref text NOT NULL,
    pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;

export const SAFETY_TOOLS = ['append_plain', 'append_keyed', 'append_checked'] as const;
export type SafetyTool = (typeof SAFETY_TOOLS)[number];

export interface SafetyLedgerOptions {
  /** Work time before the effect (the window in which a fault finds a call in flight). */
  readonly workMs: number;
  readonly timeoutMs: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

/** The three tools over `pool` (whose search_path holds {@link SAFETY_LEDGER_DDL}). */
export function safetyLedgerTools(pool: pg.Pool, options: SafetyLedgerOptions): ToolDefinition[] {
  const tool = (
    name: SafetyTool,
    retrySafety: RetrySafety<LedgerAppendArgs>,
    keyed: boolean,
  ): ToolDefinition =>
    defineTool({
      name,
      ...LEDGER_APPEND,
      timeoutMs: options.timeoutMs,
      rateLimit: { capacity: 100_000, refillPerSecond: 10_000, per: ['tenant'] },
      retrySafety,
      execute: async (args, inv) => {
        await sleep(options.workMs, inv.signal);
        // A well-behaved downstream client: it does not start a request it was told to abandon, nor
        // one whose time limit passed while the process was paused (its timer may not have run).
        inv.assertLive();
        await pool.query('INSERT INTO effect_invocations (tool, call_ref, pid) VALUES ($1, $2, $3)', [
          name,
          args.ref,
          process.pid,
        ]);
        const { rows } = keyed
          ? await pool.query<{ id: string }>(
              `WITH ins AS (
                 INSERT INTO effects (tool, key, seq, call_ref, idem_key, pid) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (idem_key) DO NOTHING RETURNING id)
               SELECT id FROM ins UNION ALL SELECT id FROM effects WHERE idem_key = $5 LIMIT 1`,
              [name, args.key, args.seq, args.ref, inv.idempotencyKey, process.pid],
            )
          : await pool.query<{ id: string }>(
              'INSERT INTO effects (tool, key, seq, call_ref, pid) VALUES ($1, $2, $3, $4, $5) RETURNING id',
              [name, args.key, args.seq, args.ref, process.pid],
            );
        return { key: args.key, seq: args.seq, row: Number(rows[0]!.id) };
      },
    }) as unknown as ToolDefinition;
  const checked = defineTool({
    name: 'append_checked',
    ...LEDGER_APPEND,
    timeoutMs: options.timeoutMs,
    rateLimit: { capacity: 100_000, refillPerSecond: 10_000, per: ['tenant'] },
    retrySafety: {
      kind: 'status-check',
      check: async (args: LedgerAppendArgs) => {
        const { rows } = await pool.query<{ id: string; key: string; seq: number }>(
          'SELECT id, key, seq FROM effects WHERE tool = $1 AND call_ref = $2 ORDER BY id LIMIT 1',
          ['append_checked', args.ref],
        );
        const row = rows[0];
        return row === undefined
          ? { state: 'not-applied' }
          : { state: 'applied', result: { key: row.key, seq: row.seq, row: Number(row.id) } };
      },
      // One request, sent at once; the work happens at the downstream (the database sleeps, then
      // writes). No assertLive() on purpose: the executor's fence alone must keep it at one effect.
      // The statement's work (workMs) is well inside the tool's timeout, so a request its caller
      // abandoned is over a timeout after it ended: that is the settle window.
      apply: async (args: LedgerAppendArgs) => {
        const { rows } = await pool.query<{ id: string }>(
          `WITH pause AS (SELECT pg_sleep($6::double precision / 1000)),
                counted AS (
                  INSERT INTO effect_invocations (tool, call_ref, pid) SELECT $1, $4, $5 FROM pause)
           INSERT INTO effects (tool, key, seq, call_ref, pid)
           SELECT $1, $2, $3, $4, $5 FROM pause RETURNING id`,
          ['append_checked', args.key, args.seq, args.ref, process.pid, options.workMs],
        );
        return { key: args.key, seq: args.seq, row: Number(rows[0]!.id) };
      },
      settleMs: options.timeoutMs,
    },
  }) as unknown as ToolDefinition;
  return [
    tool('append_plain', { kind: 'none' }, false),
    tool('append_keyed', { kind: 'forwards-key' }, true),
    checked,
  ];
}

export interface EffectCounts {
  /** Effect rows per call ref. */
  readonly effects: Map<string, number>;
  /** Tool invocations per call ref (re-runs included, deduped or not). */
  readonly invocations: Map<string, number>;
  /** Effect row ids per call ref, to compare with the rows results name. */
  readonly rowIds: Map<string, Set<number>>;
  /** Per call ref, each effect as `<tool> row <id> by pid <pid> at <time>`, for diagnostics. */
  readonly described: Map<string, string[]>;
}

export async function effectCounts(pool: pg.Pool): Promise<EffectCounts> {
  const effects = new Map<string, number>();
  const invocations = new Map<string, number>();
  const rowIds = new Map<string, Set<number>>();
  const described = new Map<string, string[]>();
  const { rows } = await pool.query<{ id: string; call_ref: string; tool: string; pid: number; at: Date }>(
    'SELECT id, call_ref, tool, pid, at FROM effects ORDER BY id',
  );
  for (const r of rows) {
    described.set(r.call_ref, [
      ...(described.get(r.call_ref) ?? []),
      `${r.tool} row ${r.id} by pid ${r.pid} at ${r.at.toISOString()}`,
    ]);
    effects.set(r.call_ref, (effects.get(r.call_ref) ?? 0) + 1);
    rowIds.set(r.call_ref, (rowIds.get(r.call_ref) ?? new Set()).add(Number(r.id)));
  }
  const { rows: inv } = await pool.query<{ call_ref: string }>('SELECT call_ref FROM effect_invocations');
  for (const r of inv) invocations.set(r.call_ref, (invocations.get(r.call_ref) ?? 0) + 1);
  return { effects, invocations, rowIds, described };
}
