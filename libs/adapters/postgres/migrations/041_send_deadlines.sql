-- The deadline each send to a downstream without idempotency keys was told (the latest per key): a
-- status check may answer "not applied" only once it has passed, since the downstream records a
-- submission before its deadline or never (libs/integrations/submission-ledger.ts). Rows written
-- before this column existed count from their last send.
ALTER TABLE status_check_submissions ADD COLUMN IF NOT EXISTS not_after timestamptz;
