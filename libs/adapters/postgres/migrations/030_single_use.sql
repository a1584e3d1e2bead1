-- Single-use ids (preview tokens' jti) and their approvals (postgres/single-use-store.ts).
-- Times are the database's (now()), so entries written by different executors compare on one clock.
-- A row is dead once expires_at has passed and is then treated as absent (a new consume or approval
-- takes its place); purgeExpired() deletes dead rows using the expires_at indexes.
CREATE TABLE single_use_ids (
  id          text        PRIMARY KEY,
  -- The logical call that consumed the id ('' when none was named); a retry by the same holder passes.
  holder      text        NOT NULL,
  consumed_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX single_use_ids_expires_at ON single_use_ids (expires_at);

CREATE TABLE single_use_approvals (
  id          text        PRIMARY KEY,
  approver    text        NOT NULL CHECK (approver <> ''),
  approved_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX single_use_approvals_expires_at ON single_use_approvals (expires_at);
