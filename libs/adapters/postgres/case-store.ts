import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { queryLimit, queryOffset, timeBound } from '../../audit/query.js';
import type { Clock } from '../../core/clock.js';
import type {
  CaseChange,
  CaseCountFilter,
  CaseFilter,
  CaseReason,
  CaseRef,
  CaseState,
  CaseStore,
  DeadLetterInput,
  ExpectedCase,
  ReconciliationCase,
  TransitionResult,
} from '../../ports/case-store.js';
import { applyTransition, dueBound, matchesExpected, newCase } from '../../reconcile/case-model.js';
import { caseSearch, zeroCounts } from '../../reconcile/case-query.js';

const COLUMNS = `case_id, dead_letter_id, call_id, tenant, tool, idempotency_key, resource_key, principal_id,
  trace_id, reason, state, context, attempt_history, last_known_state, status_checks, next_check_at_ms,
  resolution, history, version, created_at_ms, updated_at_ms`;

/**
 * Reconciliation cases in PostgreSQL (table `reconciliation_cases`, migration 011_cases.sql; run
 * `migrate(pool)` first). Times come from `clock`, as in the in-memory store.
 *
 * openFromDeadLetter is one `INSERT … ON CONFLICT DO NOTHING` (unique call_id and dead_letter_id), so
 * exactly one of concurrent openers creates the case; the others read it back. transition reads the
 * case, applies the case model, and writes with `UPDATE … WHERE version = <read version>`: a
 * concurrent writer that got there first makes the update match no row, reported as
 * `state-changed`, and nothing is written.
 */
export class PostgresCaseStore implements CaseStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async openFromDeadLetter(dl: DeadLetterInput): Promise<{ created: boolean; case: ReconciliationCase }> {
    const c = newCase(dl, randomUUID(), this.clock.now());
    const inserted = await this.pool.query<CaseRow>(
      `INSERT INTO reconciliation_cases (${COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        c.caseId,
        c.deadLetterId,
        c.callId,
        c.tenant,
        c.tool,
        c.idempotencyKey,
        c.resourceKey,
        c.principalId,
        c.traceId,
        c.reason,
        c.state,
        JSON.stringify(c.context),
        JSON.stringify(c.attemptHistory),
        JSON.stringify(c.lastKnownState),
        JSON.stringify(c.statusChecks),
        c.nextCheckAtMs,
        jsonOrNull(c.resolution),
        JSON.stringify(c.history),
        c.version,
        c.createdAtMs,
        c.updatedAtMs,
      ],
    );
    const row = inserted.rows[0];
    if (row !== undefined) return { created: true, case: toCase(row) };
    // The conflict's winner has committed (ON CONFLICT waits for it), so the read below sees it.
    const existing =
      (c.callId === null ? undefined : await this.get({ callId: c.callId })) ??
      (await this.get({ deadLetterId: c.deadLetterId }));
    if (existing === undefined)
      throw new Error(`case for dead letter ${c.deadLetterId} vanished after a conflict`);
    return { created: false, case: existing };
  }

  async get(ref: CaseRef): Promise<ReconciliationCase | undefined> {
    const [column, value] =
      typeof ref === 'string'
        ? ['case_id', ref]
        : 'callId' in ref
          ? ['call_id', ref.callId]
          : ['dead_letter_id', ref.deadLetterId];
    const { rows } = await this.pool.query<CaseRow>(
      `SELECT ${COLUMNS} FROM reconciliation_cases WHERE ${column} = $1`,
      [value],
    );
    const row = rows[0];
    return row === undefined ? undefined : toCase(row);
  }

  async list(filter: CaseFilter): Promise<ReconciliationCase[]> {
    const { where, params, add } = caseWhere(filter);
    if (filter.state !== undefined) add('state = ?', filter.state);
    if (filter.dueBeforeMs !== undefined) {
      add("state = 'open' AND next_check_at_ms <= ?", dueBound(filter.dueBeforeMs));
    }
    const dir = filter.order === 'desc' ? 'DESC' : 'ASC';
    const order =
      filter.dueBeforeMs === undefined
        ? `created_at_ms ${dir}, case_id ${dir}`
        : 'next_check_at_ms, created_at_ms, case_id';
    params.push(queryLimit(filter.limit), queryOffset(filter.offset));
    const { rows } = await this.pool.query<CaseRow>(
      `SELECT ${COLUMNS} FROM reconciliation_cases
       ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
       ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toCase);
  }

  async countByState(filter: CaseCountFilter): Promise<Record<CaseState, number>> {
    const { where, params } = caseWhere(filter);
    const { rows } = await this.pool.query<{ state: CaseState; n: string }>(
      `SELECT state, count(*) AS n FROM reconciliation_cases
       ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} GROUP BY state`,
      params,
    );
    const counts = zeroCounts();
    for (const r of rows) counts[r.state] = Number(r.n);
    return counts;
  }

  async transition(caseId: string, change: CaseChange, expected: ExpectedCase): Promise<TransitionResult> {
    const current = await this.get(caseId);
    if (current === undefined) return { ok: false, reason: 'not-found' };
    if (!matchesExpected(current, expected)) return { ok: false, reason: 'state-changed', case: current };
    const applied = applyTransition(current, change, this.clock.now());
    if (!applied.ok) return { ok: false, reason: 'not-allowed', case: current, detail: applied.detail };
    const next = applied.next;
    const { rows } = await this.pool.query<CaseRow>(
      `UPDATE reconciliation_cases
       SET state = $3, status_checks = $4, next_check_at_ms = $5, resolution = $6, history = $7,
           version = $8, updated_at_ms = $9
       WHERE case_id = $1 AND version = $2
       RETURNING ${COLUMNS}`,
      [
        caseId,
        current.version,
        next.state,
        JSON.stringify(next.statusChecks),
        next.nextCheckAtMs,
        jsonOrNull(next.resolution),
        JSON.stringify(next.history),
        next.version,
        next.updatedAtMs,
      ],
    );
    const row = rows[0];
    if (row !== undefined) return { ok: true, case: toCase(row) };
    const now = await this.get(caseId);
    return now === undefined
      ? { ok: false, reason: 'not-found' }
      : { ok: false, reason: 'state-changed', case: now };
  }
}

/** SQL NULL for null (JSON.stringify would store the JSON value null, which the CHECKs count as set). */
function jsonOrNull(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** A row as pg returns it (bigint columns arrive as strings, jsonb parsed). */
interface CaseRow {
  case_id: string;
  dead_letter_id: string;
  call_id: string | null;
  tenant: string | null;
  tool: string | null;
  idempotency_key: string | null;
  resource_key: string | null;
  principal_id: string | null;
  trace_id: string | null;
  reason: string;
  state: string;
  context: Record<string, unknown>;
  attempt_history: unknown[];
  last_known_state: unknown;
  status_checks: ReconciliationCase['statusChecks'];
  next_check_at_ms: string | null;
  resolution: ReconciliationCase['resolution'];
  history: ReconciliationCase['history'];
  version: number;
  created_at_ms: string;
  updated_at_ms: string;
}

function toCase(row: CaseRow): ReconciliationCase {
  return {
    caseId: row.case_id,
    deadLetterId: row.dead_letter_id,
    callId: row.call_id,
    tenant: row.tenant,
    tool: row.tool,
    idempotencyKey: row.idempotency_key,
    resourceKey: row.resource_key,
    principalId: row.principal_id,
    traceId: row.trace_id,
    reason: row.reason as CaseReason,
    state: row.state as CaseState,
    context: row.context,
    attemptHistory: row.attempt_history,
    lastKnownState: row.last_known_state,
    statusChecks: row.status_checks,
    nextCheckAtMs: row.next_check_at_ms === null ? null : Number(row.next_check_at_ms),
    resolution: row.resolution,
    history: row.history,
    version: row.version,
    createdAtMs: Number(row.created_at_ms),
    updatedAtMs: Number(row.updated_at_ms),
  };
}

/** The WHERE parts a list and a count share: tenant, tenant scope, tool and free-text search. */
function caseWhere(filter: CaseCountFilter): {
  where: string[];
  params: unknown[];
  add: (sql: string, value: unknown) => void;
} {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (sql: string, value: unknown): void => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (filter.tenant !== undefined) add('tenant = ?', filter.tenant);
  if (filter.tenants !== undefined) add('tenant = ANY(?::text[])', [...filter.tenants]);
  if (filter.tool !== undefined) add('tool = ?', filter.tool);
  if (filter.reason !== undefined) add('reason = ?', filter.reason);
  const from = timeBound('createdFromMs', filter.createdFromMs);
  const to = timeBound('createdToMs', filter.createdToMs);
  if (from !== undefined) add('created_at_ms >= ?', from);
  if (to !== undefined) add('created_at_ms < ?', to);
  const search = caseSearch(filter.search);
  if (search !== undefined) {
    // position() rather than LIKE: the text is matched as typed, % and _ included.
    add(
      `(position(? in lower(case_id)) > 0 OR position(? in lower(dead_letter_id)) > 0
        OR position(? in lower(coalesce(call_id, ''))) > 0 OR position(? in lower(coalesce(trace_id, ''))) > 0
        OR position(? in lower(coalesce(tool, ''))) > 0 OR position(? in lower(coalesce(context->>'errorMessage', ''))) > 0)`,
      search,
    );
  }
  return { where, params, add };
}
