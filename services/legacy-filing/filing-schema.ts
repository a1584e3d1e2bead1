import type pg from 'pg';
import { underSchemaLock } from '../../libs/adapters/postgres/schema-lock.js';

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
  received_at     timestamptz NOT NULL,
  expires_at      timestamptz
);
ALTER TABLE legacy_filings ADD COLUMN IF NOT EXISTS expires_at timestamptz;
CREATE OR REPLACE FUNCTION legacy_filings_not_expired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.expires_at IS NOT NULL AND clock_timestamp() > NEW.expires_at THEN
    RAISE EXCEPTION 'submission expired before it could be recorded' USING ERRCODE = 'LF001';
  END IF;
  RETURN NULL;
END $$;
DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_trigger
     WHERE tgname = 'legacy_filings_not_expired' AND tgrelid = 'legacy_filings'::regclass
  ) THEN
    CREATE CONSTRAINT TRIGGER legacy_filings_not_expired AFTER INSERT ON legacy_filings
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION legacy_filings_not_expired();
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS legacy_filings_natural_key ON legacy_filings (tenant_id, filer_id, form_type, period);
CREATE INDEX IF NOT EXISTS legacy_filings_period ON legacy_filings (tenant_id, period);
`;

/**
 * Creates the table in the pool's current schema if missing. Safe to run concurrently (an advisory
 * lock keyed by the schema name serializes the DDL).
 */
export async function ensureLegacyFilingSchema(pool: pg.Pool): Promise<void> {
  await underSchemaLock(pool, 'legacy_filing.schema', async (client) => {
    await client.query(SCHEMA_SQL);
  });
}
