-- The audit log (postgres/audit-store.ts): append-only and hash-chained, one chain per tenant.
--
-- body is the stored AuditRecord; the columns beside it are derived from it for indexing
-- (libs/audit/columns.ts). hash = sha256hex(prev_hash || canonical JSON of {v, chain, seq, record_id,
-- producer_id, source, recorded_at_ms, body}) (libs/audit/hash-chain.ts); verify() re-derives the
-- columns and re-computes every hash, so an edited body, column or link is reported by seq.
--
-- Append-only is enforced by triggers, which bind every role including superusers and the table
-- owner. They are ENABLE ALWAYS, so `SET session_replication_role = replica` (which silences ordinary
-- triggers, e.g. for logical-replication apply) does not silence them. What they cannot stop: a
-- superuser or the owner may `ALTER TABLE audit_records DISABLE TRIGGER ...` (or drop the table).
-- That is what the hash chain is for: verify() finds the edit, and anchors (chain heads kept outside
-- the database) find a rewritten suffix or deleted newest records. In production the audit sink
-- should connect as a role that has only INSERT and SELECT here and does not own the table.
CREATE TABLE audit_records (
  -- COLLATE "C": chains order by code point whatever the database locale, as in the other adapters.
  chain          text   COLLATE "C" NOT NULL,
  seq            bigint NOT NULL CHECK (seq >= 1),
  record_id      text   NOT NULL,
  producer_id    text   NOT NULL,
  source         text   NOT NULL,
  recorded_at_ms bigint NOT NULL,
  tool           text   NOT NULL,
  principal_id   text   NOT NULL,
  tenant         text   NOT NULL,
  resource_key   text,
  -- The resource's own id: resource_key after "<tenant>:<kind>:" (whoDid({tool, resource})).
  resource_id    text,
  call_id        text   NOT NULL,
  trace_id       text   NOT NULL,
  outcome        text   NOT NULL,
  error_code     text,
  -- The first stage that did not pass, and its model-safe reason (whoDid's "why").
  stage          text,
  reason         text,
  body           jsonb  NOT NULL,
  prev_hash      text   NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash           text   NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  PRIMARY KEY (chain, seq),
  CONSTRAINT audit_records_record_id_unique UNIQUE (record_id)
);

-- One index per query filter; each leads with the filter and ends with the query order.
CREATE INDEX audit_records_recorded_at ON audit_records (recorded_at_ms, chain, seq);
CREATE INDEX audit_records_tool ON audit_records (tool, recorded_at_ms);
CREATE INDEX audit_records_principal ON audit_records (principal_id, recorded_at_ms);
CREATE INDEX audit_records_tenant ON audit_records (tenant, recorded_at_ms);
CREATE INDEX audit_records_resource_key ON audit_records (resource_key, recorded_at_ms) WHERE resource_key IS NOT NULL;
CREATE INDEX audit_records_resource_id ON audit_records (resource_id, tool, recorded_at_ms) WHERE resource_id IS NOT NULL;
CREATE INDEX audit_records_call ON audit_records (call_id);
CREATE INDEX audit_records_trace ON audit_records (trace_id);
CREATE INDEX audit_records_outcome ON audit_records (outcome, recorded_at_ms);

CREATE FUNCTION audit_records_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_records is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'Audit records are never changed or removed; append a new record instead.';
END;
$$;

-- Row level: refuses every UPDATE and DELETE of a stored row.
CREATE TRIGGER audit_records_refuse_rows
  BEFORE UPDATE OR DELETE ON audit_records
  FOR EACH ROW EXECUTE FUNCTION audit_records_refuse_change();

-- Statement level: TRUNCATE has no row triggers; UPDATE and DELETE are refused here as well, even
-- when they would touch no row.
CREATE TRIGGER audit_records_refuse_statements
  BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_records
  FOR EACH STATEMENT EXECUTE FUNCTION audit_records_refuse_change();

ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_rows;
ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_statements;

REVOKE UPDATE, DELETE, TRUNCATE ON audit_records FROM PUBLIC;
