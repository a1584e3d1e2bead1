import type pg from 'pg';
import type { ConsumeResult, SingleUseStore } from '../../ports/single-use-store.js';
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
 * Single-use ids in PostgreSQL (table `single_use_ids`, migration 030_single_use.sql; run `migrate(pool)` first), shared by every executor using the database. Each
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

  /** Deletes dead rows; returns how many. Safe to run at any time, from anywhere. */
  async purgeExpired(): Promise<number> {
    const used = await this.pool.query('DELETE FROM single_use_ids WHERE expires_at <= now()');
    return used.rowCount ?? 0;
  }
}
