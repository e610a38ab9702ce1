-- See the PostgreSQL migration.
CREATE TABLE webhook_endpoints (
    id               TEXT    PRIMARY KEY,
    company_id       TEXT    NOT NULL REFERENCES companies (id),
    url              TEXT    NOT NULL,
    description      TEXT    NOT NULL DEFAULT '',
    event_types      TEXT    NOT NULL,
    enabled          BOOLEAN NOT NULL,
    disabled_reason  TEXT    NOT NULL DEFAULT '',
    secret           BLOB    NOT NULL,
    previous_secret  BLOB,
    previous_until   TEXT,
    position_change  INTEGER NOT NULL,
    position_section TEXT    NOT NULL,
    position_id      TEXT    NOT NULL,
    failures         INTEGER NOT NULL DEFAULT 0,
    failing_since    TEXT,
    next_attempt_at  TEXT    NOT NULL,
    version          INTEGER NOT NULL DEFAULT 1,
    lease_owner      TEXT,
    lease_until      TEXT,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    UNIQUE (company_id, id)
);
--bun:split
CREATE INDEX webhook_endpoints_due_idx ON webhook_endpoints (next_attempt_at) WHERE enabled;
--bun:split
CREATE TABLE webhook_deliveries (
    id               TEXT    PRIMARY KEY,
    company_id       TEXT    NOT NULL,
    endpoint_id      TEXT    NOT NULL,
    message_id       TEXT    NOT NULL,
    type             TEXT    NOT NULL,
    position_change  INTEGER NOT NULL,
    position_section TEXT    NOT NULL,
    position_id      TEXT    NOT NULL,
    at               TEXT    NOT NULL,
    status           INTEGER NOT NULL,
    error            TEXT    NOT NULL,
    duration_us      INTEGER NOT NULL,
    outcome          TEXT    NOT NULL,
    FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (company_id, endpoint_id, id);
--bun:split
CREATE INDEX webhook_deliveries_at_idx ON webhook_deliveries (at);
--bun:split
CREATE INDEX records_change_idx ON records (company_id, change);
