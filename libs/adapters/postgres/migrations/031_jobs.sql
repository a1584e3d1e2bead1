-- Long-running jobs (postgres/job-store.ts). One row per job; a tenant's submission key is unique,
-- so a retried submit finds its job. The timeline (submitted_at_ms, queued_ms, run_ms) is the
-- submitter's clock; the outcome is written once (first writer wins).
CREATE TABLE jobs (
  job_id          text    PRIMARY KEY,
  tenant          text    NOT NULL,
  submission_key  text    NOT NULL,
  kind            text    NOT NULL,
  params          jsonb   NOT NULL,
  submitted_by    text    NOT NULL,
  on_behalf_of    text,
  submitted_at_ms bigint  NOT NULL,
  queued_ms       bigint  NOT NULL CHECK (queued_ms >= 0),
  run_ms          bigint  NOT NULL CHECK (run_ms >= 0),
  outcome         jsonb,
  CONSTRAINT jobs_submission_unique UNIQUE (tenant, submission_key)
);
