-- Reconciliation cases (postgres/case-store.ts), one per dead-lettered call. Every write goes through
-- libs/reconcile/case-model.ts; the constraints below restate its invariants so that no other writer
-- can store a case the model could not have produced.
CREATE TABLE reconciliation_cases (
  -- COLLATE "C": ties order by code point, as in the in-memory store, whatever the locale.
  case_id          text    COLLATE "C" PRIMARY KEY,
  dead_letter_id   text    NOT NULL,
  -- NULL only for poison that could not be decoded; such a case is unique by dead_letter_id.
  call_id          text,
  tenant           text,
  tool             text,
  idempotency_key  text,
  resource_key     text,
  principal_id     text,
  trace_id         text,
  reason           text    NOT NULL CHECK (reason IN ('UNRESOLVED', 'EXHAUSTED', 'POISON')),
  state            text    NOT NULL CHECK (state IN ('open', 'resolved_succeeded', 'resolved_failed', 'needs_manual')),
  context          jsonb   NOT NULL,
  attempt_history  jsonb   NOT NULL CHECK (jsonb_typeof(attempt_history) = 'array'),
  last_known_state jsonb   NOT NULL,
  status_checks    jsonb   NOT NULL CHECK (jsonb_typeof(status_checks) = 'array'),
  next_check_at_ms bigint,
  resolution       jsonb,
  history          jsonb   NOT NULL CHECK (jsonb_typeof(history) = 'array'),
  version          integer NOT NULL CHECK (version >= 1),
  created_at_ms    bigint  NOT NULL,
  updated_at_ms    bigint  NOT NULL,
  -- A redelivered dead letter, or a second one for the same call, must not open a second case.
  CONSTRAINT reconciliation_cases_call_unique UNIQUE (call_id),
  CONSTRAINT reconciliation_cases_dead_letter_unique UNIQUE (dead_letter_id),
  CONSTRAINT reconciliation_cases_due_iff_open CHECK ((state = 'open') = (next_check_at_ms IS NOT NULL)),
  CONSTRAINT reconciliation_cases_resolution_iff_resolved
    CHECK ((state IN ('resolved_succeeded', 'resolved_failed')) = (resolution IS NOT NULL)),
  CONSTRAINT reconciliation_cases_identified CHECK (call_id IS NOT NULL OR reason = 'POISON')
);

-- The reconciler's poll: open cases whose check is due, soonest first.
CREATE INDEX reconciliation_cases_due ON reconciliation_cases (next_check_at_ms, created_at_ms, case_id)
  WHERE state = 'open';
CREATE INDEX reconciliation_cases_state ON reconciliation_cases (state, created_at_ms, case_id);
CREATE INDEX reconciliation_cases_tenant ON reconciliation_cases (tenant, state, created_at_ms);
CREATE INDEX reconciliation_cases_tool ON reconciliation_cases (tool, state, created_at_ms);
