import type pg from 'pg';
import type {
  ClaimResult,
  IdempotencyStore,
  PeekResult,
  StoredResult,
} from '../../ports/idempotency-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';
import {
  abandonedRetentionMs,
  checkClaim,
  checkComplete,
  type IdempotencyStoreOptions,
} from '../memory/idempotency-options.js';

/**
 * One statement: take the key when it is absent, dead (expired), or in flight on a lapsed lease with
 * the same fingerprint; otherwise report what is there. The INSERT ... ON CONFLICT locks the row and
 * judges its newest version, so two claims never both take the key. When it did not take the key,
 * the second branch reads the row from the statement's snapshot; if that snapshot does not show a
 * reportable row (it was inserted or changed after the snapshot was taken) the statement returns no
 * row and is simply run again.
 *
 * $1 key, $2 fingerprint, $3 owner, $4 lease ms, $5 abandoned retention ms.
 */
const CLAIM_SQL = `
WITH taken AS (
  INSERT INTO idempotency_keys AS k
    (key, fingerprint, state, owner, lease_expires_at, expires_at, claimed_at)
  VALUES ($1::text, $2::text, 'in-flight', $3::text,
          now() + $4::bigint * interval '1 millisecond',
          now() + ($4::bigint + $5::bigint) * interval '1 millisecond',
          now())
  ON CONFLICT (key) DO UPDATE SET
    fingerprint = EXCLUDED.fingerprint,
    state = 'in-flight',
    owner = EXCLUDED.owner,
    lease_expires_at = EXCLUDED.lease_expires_at,
    taken_over_from = CASE WHEN k.expires_at > now() THEN k.owner END,
    stored = NULL,
    expires_at = EXCLUDED.expires_at,
    claimed_at = EXCLUDED.claimed_at,
    completed_at = NULL
  WHERE k.expires_at <= now()
     OR (k.state = 'in-flight' AND k.lease_expires_at <= now() AND k.fingerprint = EXCLUDED.fingerprint)
  RETURNING k.taken_over_from, k.lease_expires_at
)
SELECT CASE WHEN taken_over_from IS NULL THEN 'claimed' ELSE 'taken-over' END AS kind,
       taken_over_from AS other,
       floor(extract(epoch FROM lease_expires_at) * 1000)::bigint AS lease_ms,
       NULL::jsonb AS stored
  FROM taken
UNION ALL
SELECT CASE WHEN r.fingerprint <> $2::text THEN 'conflict'
            WHEN r.state = 'completed' THEN 'completed'
            ELSE 'in-flight' END,
       CASE WHEN r.fingerprint <> $2::text THEN r.fingerprint ELSE r.owner END,
       floor(extract(epoch FROM r.lease_expires_at) * 1000)::bigint,
       r.stored
  FROM idempotency_keys r
 WHERE r.key = $1::text
   AND r.expires_at > now()
   AND NOT (r.state = 'in-flight' AND r.lease_expires_at <= now() AND r.fingerprint = $2::text)
   AND NOT EXISTS (SELECT 1 FROM taken)`;

const COMPLETE_SQL = `
UPDATE idempotency_keys
   SET state = 'completed', stored = $3::jsonb, lease_expires_at = NULL,
       expires_at = now() + $4::bigint * interval '1 millisecond', completed_at = now()
 WHERE key = $1::text AND owner = $2::text AND state = 'in-flight' AND expires_at > now()`;

const RELEASE_SQL = `
DELETE FROM idempotency_keys
 WHERE key = $1::text AND owner = $2::text AND state = 'in-flight' AND expires_at > now()`;

/**
 * Replaces an UNRESOLVED answer: only a live completed row whose stored outcome is 'UNRESOLVED'.
 * $1 key, $2 settled result (jsonb), $3 ttl ms.
 */
const SETTLE_SQL = `
UPDATE idempotency_keys
   SET stored = $2::jsonb,
       expires_at = now() + $3::bigint * interval '1 millisecond', completed_at = now()
 WHERE key = $1::text AND state = 'completed' AND expires_at > now()
   AND stored->>'outcome' = 'UNRESOLVED'`;

/**
 * Reads one live row, writing nothing (a plain SELECT takes no row lock), the lease judged on the
 * database's now() like CLAIM_SQL. $1 key.
 */
const PEEK_SQL = `
SELECT state, fingerprint, owner, stored,
       floor(extract(epoch FROM lease_expires_at) * 1000)::bigint AS lease_ms,
       lease_expires_at <= now() AS lease_expired
  FROM idempotency_keys
 WHERE key = $1::text AND expires_at > now()`;

interface PeekRow {
  state: 'in-flight' | 'completed';
  fingerprint: string;
  owner: string;
  stored: StoredResult | null;
  lease_ms: string | null;
  lease_expired: boolean | null;
}

/** A claim that keeps losing the snapshot race this many times in a row is reported as an error. */
const MAX_CLAIM_ATTEMPTS = 20;

interface ClaimRow {
  kind: ClaimResult['kind'];
  other: string | null;
  lease_ms: string | null;
  stored: StoredResult | null;
}

/**
 * Idempotency records in Postgres, table `idempotency_keys` (migration 001_idempotency.sql; run
 * {@link migrate} first). Shared by every executor using the database.
 *
 * claim is one atomic statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE, see CLAIM_SQL); complete,
 * release and settle are single conditional UPDATE/DELETE statements; peek is one SELECT. Time is the database's now(), so
 * leases taken by different executors are compared on one clock and `leaseExpiresAtMs` is database
 * time. A completed row is dead once its TTL passes and is treated as absent on every read;
 * {@link purgeExpired} deletes dead rows. Ownership rules are those of MemoryIdempotencyStore. Needs
 * READ COMMITTED (the default): the claim statement relies on ON CONFLICT seeing rows committed after
 * its snapshot. Results round-trip through JSON (jsonb). Throws when the
 * database is unreachable (callers fail closed).
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  private readonly abandonedRetentionMs: number;

  constructor(
    private readonly pool: pg.Pool,
    options: IdempotencyStoreOptions = {},
  ) {
    this.abandonedRetentionMs = abandonedRetentionMs(options);
  }

  async claim(key: string, fingerprint: string, owner: string, leaseMs: number): Promise<ClaimResult> {
    const lease = checkClaim(key, fingerprint, owner, leaseMs);
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      const { rows } = await this.pool.query<ClaimRow>(CLAIM_SQL, [
        key,
        fingerprint,
        owner,
        lease,
        this.abandonedRetentionMs,
      ]);
      const row = rows[0];
      if (row !== undefined) return toClaimResult(row);
    }
    throw new Error(`idempotency claim of ${key} kept racing with concurrent writers; giving up`);
  }

  async complete(key: string, owner: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    const ttl = checkComplete(key, owner, ttlMs);
    const result = await this.pool.query(COMPLETE_SQL, [key, owner, JSON.stringify(stored), ttl]);
    return result.rowCount === 1;
  }

  async release(key: string, owner: string): Promise<boolean> {
    checkKey('key', key);
    checkKey('owner', owner);
    const result = await this.pool.query(RELEASE_SQL, [key, owner]);
    return result.rowCount === 1;
  }

  async settle(key: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    checkKey('key', key);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const result = await this.pool.query(SETTLE_SQL, [key, JSON.stringify(stored), ttl]);
    return result.rowCount === 1;
  }

  async peek(key: string): Promise<PeekResult> {
    checkKey('key', key);
    const { rows } = await this.pool.query<PeekRow>(PEEK_SQL, [key]);
    const row = rows[0];
    return row === undefined ? { kind: 'absent' } : toPeekResult(row);
  }

  /**
   * Deletes dead rows (completed past their TTL, abandoned in-flight past retention); returns how
   * many. Dead rows already behave as absent, so this only reclaims space: run it periodically.
   */
  async purgeExpired(): Promise<number> {
    const result = await this.pool.query('DELETE FROM idempotency_keys WHERE expires_at <= now()');
    return result.rowCount ?? 0;
  }
}

function toPeekResult(row: PeekRow): PeekResult {
  const { state, fingerprint, owner, stored } = row;
  if (state === 'completed' && stored !== null) return { kind: 'completed', fingerprint, stored };
  if (state === 'in-flight' && row.lease_ms !== null && row.lease_expired !== null) {
    return {
      kind: 'in-flight',
      fingerprint,
      owner,
      leaseExpiresAtMs: Number(row.lease_ms),
      leaseExpired: row.lease_expired,
    };
  }
  throw new Error(`unexpected idempotency row: ${JSON.stringify(row)}`);
}

function toClaimResult(row: ClaimRow): ClaimResult {
  const { kind, other, stored } = row;
  const leaseMs = row.lease_ms === null ? null : Number(row.lease_ms);
  if (kind === 'claimed' && leaseMs !== null) return { kind, leaseExpiresAtMs: leaseMs };
  if (kind === 'taken-over' && other !== null && leaseMs !== null) {
    return { kind, previousOwner: other, leaseExpiresAtMs: leaseMs };
  }
  if (kind === 'in-flight' && other !== null && leaseMs !== null)
    return { kind, owner: other, leaseExpiresAtMs: leaseMs };
  if (kind === 'completed' && stored !== null) return { kind, stored };
  if (kind === 'conflict' && other !== null) return { kind, storedFingerprint: other };
  throw new Error(`unexpected idempotency claim row: ${JSON.stringify(row)}`);
}
