-- Token buckets, one row per bucket key (postgres-rate-limiter.ts).
-- tokens is fractional; refilled_at is when it was computed (database clock, never moved backwards).
-- full_at is when the untouched bucket will be full again: from then on the row means the same as no
-- row, so purgeIdle() may delete it.
CREATE TABLE rate_limit_buckets (
  key         text             PRIMARY KEY,
  tokens      double precision NOT NULL CHECK (tokens >= 0),
  refilled_at timestamptz      NOT NULL,
  full_at     timestamptz      NOT NULL
);

CREATE INDEX rate_limit_buckets_full_at ON rate_limit_buckets (full_at);
