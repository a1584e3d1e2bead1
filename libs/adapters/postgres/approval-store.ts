import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import type { TenantScope } from '../../core/tenant-scope.js';
import {
  approvalTransition,
  asOf,
  creationEvent,
  decodeApprovalCursor,
  encodeApprovalCursor,
  newApprovalRequest,
  pageSizeOf,
  type ApprovalAction,
} from '../../patterns/approval/approval-rules.js';
import {
  APPROVAL_STATES,
  type ApprovalChange,
  type ApprovalDraft,
  type ApprovalEvent,
  type ApprovalListing,
  type ApprovalPage,
  type ApprovalRequest,
  type ApprovalState,
  type ApprovalStore,
  type ApprovalVote,
} from '../../ports/approval-store.js';
import { checkKey } from '../memory/argument-checks.js';

const COLUMNS = `id, tenant, tool, tool_version, arguments, arguments_hash, requester, on_behalf_of, rule, reason,
  approvers_required, origin, state, version, approvals, rejection, redeemed_by, created_at_ms, expires_at_ms`;

/** Insert unless present, and write its creation event, in one statement; answers the stored row. */
const CREATE_SQL = `
WITH made AS (
  INSERT INTO approval_requests (${COLUMNS})
  VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12::jsonb, 'pending', 1, '[]', NULL, NULL, $13, $14)
  ON CONFLICT (id) DO NOTHING
  RETURNING ${COLUMNS}
), logged AS (
  INSERT INTO approval_events (id, version, from_state, to_state, actor, note, at_ms)
  SELECT id, 1, 'new', 'pending', $15, reason, created_at_ms FROM made
)
SELECT ${COLUMNS}, true AS created FROM made`;

/** The compare-and-set of one transition plus its event: no row when another transition came first. */
const MOVE_SQL = `
WITH moved AS (
  UPDATE approval_requests
     SET state = $3, version = version + 1, approvals = $4::jsonb, rejection = $5::jsonb, redeemed_by = $6
   WHERE id = $1 AND version = $2
  RETURNING ${COLUMNS}
), logged AS (
  INSERT INTO approval_events (id, version, from_state, to_state, actor, note, at_ms)
  SELECT id, version, $7, $3, $8, $9, $10 FROM moved
)
SELECT ${COLUMNS} FROM moved`;

/** A request's state now: a pending or approved row past its expiry is expired ($1 = now ms). */
const STATE_NOW = `CASE WHEN state IN ('pending', 'approved') AND expires_at_ms <= $1 THEN 'expired' ELSE state END`;

/** Transitions re-judged after losing a compare-and-set; each loss means another transition was stored. */
const MAX_MOVE_ATTEMPTS = 200;

interface Row {
  id: string;
  tenant: string;
  tool: string;
  tool_version: string;
  arguments: Record<string, unknown>;
  arguments_hash: string;
  requester: string;
  on_behalf_of: string | null;
  rule: string;
  reason: string;
  approvers_required: number;
  origin: ApprovalRequest['origin'] | null;
  state: ApprovalState;
  version: number;
  approvals: ApprovalVote[];
  rejection: ApprovalVote | null;
  redeemed_by: string | null;
  created_at_ms: string;
  expires_at_ms: string;
  created?: boolean;
}

/**
 * Approval requests in PostgreSQL (tables `approval_requests` and `approval_events`, migration
 * 042_approvals.sql; run `migrate(pool)` first), shared by every executor and console on the database.
 * A transition reads the row, judges it with `approvalTransition`, and stores the result with one
 * statement that updates the row only if its version is still the one judged and appends the event;
 * a lost race is re-judged against the row the winner left. Times are `clock`'s. Throws when the
 * database is unreachable. See {@link ApprovalStore} for the contract.
 */
export class PostgresApprovalStore implements ApprovalStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async create(draft: ApprovalDraft): Promise<{ request: ApprovalRequest; created: boolean }> {
    const fresh = newApprovalRequest(draft, this.clock.now());
    const { rows } = await this.pool.query<Row>(CREATE_SQL, [
      fresh.id,
      fresh.tenant,
      fresh.tool,
      fresh.toolVersion,
      JSON.stringify(fresh.arguments),
      fresh.argumentsHash,
      fresh.requester,
      fresh.onBehalfOf ?? null,
      fresh.rule.rule,
      fresh.rule.reason,
      fresh.rule.approvers,
      fresh.origin === undefined ? null : JSON.stringify(fresh.origin),
      fresh.createdAtMs,
      fresh.expiresAtMs,
      creationEvent(fresh).by,
    ]);
    if (rows[0] !== undefined) return { request: toRequest(rows[0]), created: true };
    const existing = await this.get(fresh.id);
    if (existing === undefined) throw new Error(`approval request ${fresh.id} could not be read back`);
    return { request: existing, created: false };
  }

  async get(id: string): Promise<ApprovalRequest | undefined> {
    checkKey('id', id);
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM approval_requests WHERE id = $1`, [
      id,
    ]);
    return rows[0] === undefined ? undefined : asOf(toRequest(rows[0]), this.clock.now());
  }

  approve(id: string, by: string, note: string): Promise<ApprovalChange> {
    return this.#apply(id, { kind: 'approve', by, note });
  }

  reject(id: string, by: string, note: string): Promise<ApprovalChange> {
    return this.#apply(id, { kind: 'reject', by, note });
  }

  redeem(id: string, holder: string): Promise<ApprovalChange> {
    return this.#apply(id, { kind: 'redeem', holder });
  }

  async list(listing: ApprovalListing): Promise<ApprovalPage> {
    const size = pageSizeOf(listing.limit);
    const after = listing.after === undefined ? undefined : decodeApprovalCursor(listing.after);
    const now = this.clock.now();
    const params: unknown[] = [now];
    const where: string[] = ['$1::bigint IS NOT NULL'];
    scoped(listing.scope, where, params);
    if (listing.state !== undefined) {
      params.push(listing.state);
      where.push(`(${STATE_NOW}) = $${params.length}`);
    }
    if (after !== undefined) {
      params.push(after.createdAtMs, after.id);
      where.push(`(created_at_ms, id) > ($${params.length - 1}::bigint, $${params.length}::text)`);
    }
    params.push(size + 1);
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM approval_requests WHERE ${where.join(' AND ')}
        ORDER BY created_at_ms, id LIMIT $${params.length}`,
      params,
    );
    const items = rows.slice(0, size).map((r) => asOf(toRequest(r), now));
    const last = items.at(-1);
    return rows.length > size && last !== undefined
      ? { items, next: encodeApprovalCursor({ createdAtMs: last.createdAtMs, id: last.id }) }
      : { items };
  }

  async counts(scope: TenantScope): Promise<Record<ApprovalState, number>> {
    const params: unknown[] = [this.clock.now()];
    const where: string[] = ['$1::bigint IS NOT NULL'];
    scoped(scope, where, params);
    const { rows } = await this.pool.query<{ state: ApprovalState; n: string }>(
      `SELECT ${STATE_NOW} AS state, count(*) AS n FROM approval_requests WHERE ${where.join(' AND ')} GROUP BY 1`,
      params,
    );
    const counts = Object.fromEntries(APPROVAL_STATES.map((s) => [s, 0])) as Record<ApprovalState, number>;
    for (const r of rows) counts[r.state] = Number(r.n);
    return counts;
  }

  async events(id: string): Promise<readonly ApprovalEvent[]> {
    const { rows } = await this.pool.query<{
      version: number;
      from_state: ApprovalEvent['from'];
      to_state: ApprovalState;
      actor: string;
      note: string;
      at_ms: string;
    }>(
      'SELECT version, from_state, to_state, actor, note, at_ms FROM approval_events WHERE id = $1 ORDER BY version',
      [id],
    );
    return rows.map((r) => ({
      id,
      version: r.version,
      from: r.from_state,
      to: r.to_state,
      by: r.actor,
      note: r.note,
      atMs: Number(r.at_ms),
    }));
  }

  async #apply(id: string, action: ApprovalAction): Promise<ApprovalChange> {
    checkKey('id', id);
    for (let attempt = 0; attempt < MAX_MOVE_ATTEMPTS; attempt += 1) {
      const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM approval_requests WHERE id = $1`, [
        id,
      ]);
      if (rows[0] === undefined) return { ok: false, refusal: 'unknown' };
      const request = toRequest(rows[0]);
      const now = this.clock.now();
      const step = approvalTransition(request, action, now);
      if (!step.ok) return { ok: false, refusal: step.refusal, request: asOf(request, now) };
      if (step.event === undefined) return { ok: true, request: step.next };
      const { next, event } = step;
      const moved = await this.pool.query<Row>(MOVE_SQL, [
        id,
        request.version,
        next.state,
        JSON.stringify(next.approvals),
        next.rejection === undefined ? null : JSON.stringify(next.rejection),
        next.redeemedBy ?? null,
        event.from,
        event.by,
        event.note,
        event.atMs,
      ]);
      if (moved.rows[0] !== undefined) return { ok: true, request: toRequest(moved.rows[0]), event };
    }
    throw new Error(`approval request ${id}: ${MAX_MOVE_ATTEMPTS} transitions lost their race in a row`);
  }
}

function scoped(scope: TenantScope, where: string[], params: unknown[]): void {
  if (scope.all) return;
  params.push(scope.tenants);
  where.push(`tenant = ANY($${params.length}::text[])`);
}

function toRequest(r: Row): ApprovalRequest {
  return {
    id: r.id,
    tenant: r.tenant,
    tool: r.tool,
    toolVersion: r.tool_version,
    arguments: r.arguments,
    argumentsHash: r.arguments_hash,
    requester: r.requester,
    ...(r.on_behalf_of === null ? {} : { onBehalfOf: r.on_behalf_of }),
    rule: { rule: r.rule, reason: r.reason, approvers: r.approvers_required },
    ...(r.origin === null ? {} : { origin: r.origin }),
    expiresAtMs: Number(r.expires_at_ms),
    state: r.state,
    version: r.version,
    createdAtMs: Number(r.created_at_ms),
    approvals: r.approvals,
    ...(r.rejection === null ? {} : { rejection: r.rejection }),
    ...(r.redeemed_by === null ? {} : { redeemedBy: r.redeemed_by }),
  };
}
