import type pg from 'pg';
import type { Approval, ConsumeResult, SingleUseStore } from '../../ports/single-use-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';

/**
 * One statement: take the id when it is absent or dead (INSERT ... ON CONFLICT locks the row and
 * judges its newest version, so two consumers never both take it); otherwise answer 'consumed' only
 * to the same non-empty holder. That second branch reads the statement's snapshot: a row another
 * transaction committed after the snapshot is not seen there, so a concurrent retry by the same holder
 * is answered 'already-used' — the safe side.
 *
 * $1 id, $2 holder ('' for none), $3 ttl ms.
 */
const CONSUME_SQL = `
WITH taken AS (
  INSERT INTO single_use_ids AS s (id, holder, consumed_at, expires_at)
  VALUES ($1::text, $2::text, now(), now() + $3::bigint * interval '1 millisecond')
  ON CONFLICT (id) DO UPDATE SET
    holder = EXCLUDED.holder,
    consumed_at = EXCLUDED.consumed_at,
    expires_at = EXCLUDED.expires_at
  WHERE s.expires_at <= now()
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM taken)
    OR ($2::text <> '' AND EXISTS (
          SELECT 1 FROM single_use_ids r
           WHERE r.id = $1::text AND r.holder = $2::text AND r.expires_at > now())) AS consumed`;

/**
 * Write the approval when none is live, then answer the approval in force. When another transaction
 * wrote it after this statement's snapshot, neither branch returns a row and the statement is run
 * again (it then sees the committed row).
 *
 * $1 id, $2 approver, $3 ttl ms.
 */
const APPROVE_SQL = `
WITH written AS (
  INSERT INTO single_use_approvals AS a (id, approver, approved_at, expires_at)
  VALUES ($1::text, $2::text, now(), now() + $3::bigint * interval '1 millisecond')
  ON CONFLICT (id) DO UPDATE SET
    approver = EXCLUDED.approver,
    approved_at = EXCLUDED.approved_at,
    expires_at = EXCLUDED.expires_at
  WHERE a.expires_at <= now()
  RETURNING approver, approved_at
)
SELECT approver, floor(extract(epoch FROM approved_at) * 1000)::bigint AS at_ms FROM written
UNION ALL
SELECT approver, floor(extract(epoch FROM approved_at) * 1000)::bigint FROM single_use_approvals
 WHERE id = $1::text AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM written)`;

const APPROVAL_SQL = `
SELECT approver, floor(extract(epoch FROM approved_at) * 1000)::bigint AS at_ms
  FROM single_use_approvals WHERE id = $1::text AND expires_at > now()`;

/** Re-runs of APPROVE_SQL that saw a concurrent writer's row only after the snapshot. */
const MAX_APPROVE_ATTEMPTS = 5;

interface ApprovalRow {
  approver: string;
  at_ms: string;
}

/**
 * Single-use ids in PostgreSQL (tables `single_use_ids` and `single_use_approvals`, migration
 * 030_single_use.sql; run `migrate(pool)` first), shared by every executor using the database. Each
 * method is one statement, atomic by `INSERT ... ON CONFLICT`; times are the database's `now()`.
 * Dead rows are ignored and replaced; {@link PostgresSingleUseStore.purgeExpired} deletes them.
 * Throws when the database is unreachable. See {@link SingleUseStore} for the contract.
 */
export class PostgresSingleUseStore implements SingleUseStore {
  constructor(private readonly pool: pg.Pool) {}

  async consume(id: string, ttlMs: number, holder = ''): Promise<ConsumeResult> {
    checkKey('id', id);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const { rows } = await this.pool.query<{ consumed: boolean }>(CONSUME_SQL, [id, holder, ttl]);
    return rows[0]?.consumed === true ? 'consumed' : 'already-used';
  }

  async approve(id: string, approver: string, ttlMs: number): Promise<Approval> {
    checkKey('id', id);
    checkKey('approver', approver);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    for (let attempt = 0; attempt < MAX_APPROVE_ATTEMPTS; attempt += 1) {
      const { rows } = await this.pool.query<ApprovalRow>(APPROVE_SQL, [id, approver, ttl]);
      if (rows[0] !== undefined) return toApproval(rows[0]);
    }
    throw new Error(`single-use approval of ${id} could not be read back`);
  }

  async approval(id: string): Promise<Approval | undefined> {
    checkKey('id', id);
    const { rows } = await this.pool.query<ApprovalRow>(APPROVAL_SQL, [id]);
    return rows[0] === undefined ? undefined : toApproval(rows[0]);
  }

  /** Deletes dead rows of both tables; returns how many. Safe to run at any time, from anywhere. */
  async purgeExpired(): Promise<number> {
    const used = await this.pool.query('DELETE FROM single_use_ids WHERE expires_at <= now()');
    const approvals = await this.pool.query('DELETE FROM single_use_approvals WHERE expires_at <= now()');
    return (used.rowCount ?? 0) + (approvals.rowCount ?? 0);
  }
}

function toApproval(row: ApprovalRow): Approval {
  return { approver: row.approver, approvedAtMs: Number(row.at_ms) };
}
