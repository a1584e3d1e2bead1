-- Approval requests (postgres/approval-store.ts): created by the preview gate when a confirm needs a
-- person's approval, decided by people in the ops console, redeemed once by the confirming call.
-- Every transition is one conditional UPDATE on `version` that also appends to approval_events.
-- Times are the writer's clock in epoch ms (the preview token's expiry is on the executor's clock).
-- Expiry is derived: a pending or approved row whose expires_at_ms passed reads as expired.
CREATE TABLE approval_requests (
  id                 text    PRIMARY KEY CHECK (id <> ''),
  tenant             text    NOT NULL CHECK (tenant <> ''),
  tool               text    NOT NULL,
  tool_version       text    NOT NULL,
  arguments          jsonb   NOT NULL,
  arguments_hash     text    NOT NULL,
  requester          text    NOT NULL CHECK (requester <> ''),
  on_behalf_of       text,
  rule               text    NOT NULL,
  reason             text    NOT NULL,
  approvers_required integer NOT NULL CHECK (approvers_required BETWEEN 1 AND 10),
  origin             jsonb,
  state              text    NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'redeemed')),
  version            integer NOT NULL,
  approvals          jsonb   NOT NULL DEFAULT '[]',
  rejection          jsonb,
  redeemed_by        text,
  created_at_ms      bigint  NOT NULL,
  expires_at_ms      bigint  NOT NULL
);
-- Keyset listing in creation order, per tenant and across tenants.
CREATE INDEX approval_requests_tenant_created ON approval_requests (tenant, created_at_ms, id);
CREATE INDEX approval_requests_created ON approval_requests (created_at_ms, id);

CREATE TABLE approval_events (
  id          text    NOT NULL REFERENCES approval_requests (id) ON DELETE CASCADE,
  version     integer NOT NULL,
  from_state  text    NOT NULL,
  to_state    text    NOT NULL,
  actor       text    NOT NULL,
  note        text    NOT NULL,
  at_ms       bigint  NOT NULL,
  PRIMARY KEY (id, version)
);

-- Approvals lived beside the single-use marks until they became requests of their own.
DROP TABLE single_use_approvals;
