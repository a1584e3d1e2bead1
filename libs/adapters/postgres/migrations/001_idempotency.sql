-- Idempotency records, one row per key (postgres-idempotency-store.ts).
-- Times are the database's (now()), so leases taken by different executors compare on one clock.
-- A row is dead once expires_at has passed (completed: ttl; in flight: lease + abandoned retention)
-- and is then treated as absent; purgeExpired() deletes dead rows using the expires_at index.
CREATE TABLE idempotency_keys (
  key              text        PRIMARY KEY,
  fingerprint      text        NOT NULL,
  state            text        NOT NULL CHECK (state IN ('in-flight', 'completed')),
  owner            text        NOT NULL,
  lease_expires_at timestamptz,
  -- The owner whose expired lease this claim took over; null for a fresh claim.
  taken_over_from  text,
  stored           jsonb,
  expires_at       timestamptz NOT NULL,
  claimed_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  CONSTRAINT idempotency_keys_lease_iff_in_flight CHECK ((state = 'in-flight') = (lease_expires_at IS NOT NULL)),
  CONSTRAINT idempotency_keys_stored_iff_completed CHECK ((state = 'completed') = (stored IS NOT NULL))
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
