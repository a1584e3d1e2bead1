import type pg from 'pg';
import type { Clock } from '../../libs/core/clock.js';
import { legacyTimestamp, type LegacyFilingRecord } from './wire.js';

/** A validated submission, in the legacy field vocabulary. */
export interface NewFiling {
  readonly TenantId: string;
  readonly FilerId: string;
  readonly FilerName: string;
  readonly FormType: string;
  readonly Period: string;
  readonly AmountCents: number;
}

/** The natural key a filing is looked up by. */
export type FilingKey = Pick<NewFiling, 'TenantId' | 'FilerId' | 'FormType' | 'Period'>;

export type InsertResult =
  | { readonly kind: 'committed'; readonly record: LegacyFilingRecord }
  /** The commit window passed before the insert could commit: rolled back, nothing stored. */
  | { readonly kind: 'abandoned' };

interface Row {
  confirmation_no: string;
  tenant_id: string;
  filer_id: string;
  filer_name: string;
  form_type: string;
  period: string;
  amount_cents: string;
  received_at: Date;
}

const COLUMNS =
  'confirmation_no, tenant_id, filer_id, filer_name, form_type, period, amount_cents, received_at';

/**
 * Inserts `filing` unless the service's commit window (measured from `receivedAtMs`) or the
 * submission's own deadline (`expiresAtMs`) has passed by the time it is ready to commit — then it
 * rolls back and stores nothing. The deadline is checked once more by the database itself at COMMIT
 * (a deferred constraint trigger), so a commit that reaches it late, however late, is refused. This is the guarantee a
 * caller's status check relies on: a submission is committed within the window, or never. The
 * statement timeout is set to what is left of the window, so a blocked insert gives up too.
 * `beforeInsert` runs inside the transaction (the fault injector's slow-down).
 */
export async function insertWithinWindow(
  pool: pg.Pool,
  filing: NewFiling,
  opts: {
    readonly receivedAtMs: number;
    readonly commitWindowMs: number;
    /** The submission's own deadline: not recorded after it, checked again by the database at commit. */
    readonly expiresAtMs?: number;
    readonly clock: Clock;
    readonly beforeInsert?: () => Promise<void>;
  },
): Promise<InsertResult> {
  const endsAtMs = Math.min(opts.receivedAtMs + opts.commitWindowMs, opts.expiresAtMs ?? Infinity);
  const left = (): number => endsAtMs - opts.clock.now();
  if (left() <= 0) return { kind: 'abandoned' };
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('statement_timeout', $1, true)", [String(Math.max(1, left()))]);
    await opts.beforeInsert?.();
    const { rows } = await client.query<Row>(
      `INSERT INTO legacy_filings (tenant_id, filer_id, filer_name, form_type, period, amount_cents, received_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7::double precision / 1000), to_timestamp($8::double precision / 1000))
       RETURNING ${COLUMNS}`,
      [
        filing.TenantId,
        filing.FilerId,
        filing.FilerName,
        filing.FormType,
        filing.Period,
        filing.AmountCents,
        opts.receivedAtMs,
        opts.expiresAtMs ?? null,
      ],
    );
    if (left() <= 0) {
      await client.query('ROLLBACK');
      return { kind: 'abandoned' };
    }
    await client.query('COMMIT');
    return { kind: 'committed', record: toRecord(rows[0]!) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    // A statement cancelled by the window's timeout, or a commit refused past the submission's
    // deadline, is an abandoned submission, not a crash.
    const code = (err as { code?: unknown }).code;
    if (code === '57014' || code === EXPIRED_AT_COMMIT) return { kind: 'abandoned' };
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The SQLSTATE of the commit-time deadline check (`legacy_filings_not_expired`). */
const EXPIRED_AT_COMMIT = 'LF001';

/** Every filing under `key`, oldest first. */
export async function filingsByNaturalKey(pool: pg.Pool, key: FilingKey): Promise<LegacyFilingRecord[]> {
  const { rows } = await pool.query<Row>(
    `SELECT ${COLUMNS} FROM legacy_filings
      WHERE tenant_id = $1 AND filer_id = $2 AND form_type = $3 AND period = $4
      ORDER BY seq`,
    [key.TenantId, key.FilerId, key.FormType, key.Period],
  );
  return rows.map(toRecord);
}

function toRecord(row: Row): LegacyFilingRecord {
  return {
    ConfirmationNo: row.confirmation_no,
    TenantId: row.tenant_id,
    FilerId: row.filer_id,
    FilerName: row.filer_name,
    FormType: row.form_type,
    Period: row.period,
    AmountCents: Number(row.amount_cents),
    ReceivedAt: legacyTimestamp(row.received_at.getTime()),
    Status: 'RECEIVED',
  };
}
