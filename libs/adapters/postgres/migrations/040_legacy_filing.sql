-- When a submission to a downstream without idempotency keys (first: the legacy filing service) was
-- last sent, per logical call. A status check may answer "not applied" only once the downstream's
-- commit window has passed since the last send (libs/integrations/submission-ledger.ts). Written
-- before every send; times are this database's clock.
CREATE TABLE IF NOT EXISTS status_check_submissions (
  submission_key text        PRIMARY KEY,
  last_sent_at   timestamptz NOT NULL,
  sends          integer     NOT NULL CHECK (sends > 0)
);

CREATE INDEX IF NOT EXISTS status_check_submissions_last_sent ON status_check_submissions (last_sent_at);
