-- Webhooks (docs/contract.md §12). An endpoint keeps where its delivery
-- stands: the last position of the change feed its receiver acknowledged,
-- the failures at the next event, and the lease of the dispatcher driving
-- it. Its signing secrets are sealed with the operator's key.
CREATE TABLE webhook_endpoints (
    id               uuid        PRIMARY KEY,
    company_id       uuid        NOT NULL REFERENCES companies (id),
    url              text        NOT NULL,
    description      text        NOT NULL DEFAULT '',
    event_types      text        NOT NULL,
    enabled          boolean     NOT NULL,
    disabled_reason  text        NOT NULL DEFAULT '',
    secret           bytea       NOT NULL,
    previous_secret  bytea,
    previous_until   timestamptz,
    position_change  bigint      NOT NULL,
    position_section text        NOT NULL,
    position_id      text        NOT NULL,
    failures         integer     NOT NULL DEFAULT 0,
    failing_since    timestamptz,
    next_attempt_at  timestamptz NOT NULL,
    version          bigint      NOT NULL DEFAULT 1,
    lease_owner      text,
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    UNIQUE (company_id, id)
);
--bun:split
CREATE INDEX webhook_endpoints_due_idx ON webhook_endpoints (next_attempt_at) WHERE enabled;
--bun:split
-- The delivery log: one row per attempt, kept 30 days. Its composite key
-- names the endpoint within its company.
CREATE TABLE webhook_deliveries (
    id               uuid        PRIMARY KEY,
    company_id       uuid        NOT NULL,
    endpoint_id      uuid        NOT NULL,
    message_id       text        NOT NULL,
    type             text        NOT NULL,
    position_change  bigint      NOT NULL,
    position_section text        NOT NULL,
    position_id      text        NOT NULL,
    at               timestamptz NOT NULL,
    status           integer     NOT NULL,
    error            text        NOT NULL,
    duration_us      bigint      NOT NULL,
    outcome          text        NOT NULL,
    FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (company_id, endpoint_id, id);
--bun:split
CREATE INDEX webhook_deliveries_at_idx ON webhook_deliveries (at);
--bun:split
-- The dispatcher reads a company's records across kinds by change.
CREATE INDEX records_change_idx ON records (company_id, change);
