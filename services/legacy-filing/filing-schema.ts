import type pg from 'pg';

/**
 * The legacy service's own table. It belongs to the (fake) legacy system, not to toolgate, so it is
 * created here rather than by toolgate's migrations.
 *
 * There is deliberately NO unique constraint on the natural key (tenant, filer, form, period): like
 * many legacy systems, this one accepts a second submission as a second filing. That is what makes a
 * blind retry dangerous, and what the status-check pattern protects against.
 */
const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS legacy_filings (
  seq             bigserial   PRIMARY KEY,
  confirmation_no text        GENERATED ALWAYS AS ('LF' || lpad(seq::text, 10, '0')) STORED,
  tenant_id       text        NOT NULL,
  filer_id        text        NOT NULL,
  filer_name      text        NOT NULL,
  form_type       text        NOT NULL,
  period          text        NOT NULL,
  amount_cents    bigint      NOT NULL,
  status          text        NOT NULL DEFAULT 'RECEIVED',
  received_at     timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS legacy_filings_natural_key ON legacy_filings (tenant_id, filer_id, form_type, period);
CREATE INDEX IF NOT EXISTS legacy_filings_period ON legacy_filings (tenant_id, period);
`;

/**
 * Creates the table in the pool's current schema if missing. Safe to run concurrently (an advisory
 * lock keyed by the schema name serializes the DDL).
 */
export async function ensureLegacyFilingSchema(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      "SELECT pg_advisory_xact_lock(hashtext('legacy_filing.schema'), hashtext(coalesce(current_schema(), '')))",
    );
    await client.query(SCHEMA_SQL);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
