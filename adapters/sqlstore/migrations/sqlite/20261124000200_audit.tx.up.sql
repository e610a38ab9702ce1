-- See the PostgreSQL migration.
CREATE TABLE audit_heads (
    company_id  TEXT    PRIMARY KEY REFERENCES companies (id),
    seq         INTEGER NOT NULL,
    hash        BLOB    NOT NULL,
    floor_seq   INTEGER NOT NULL DEFAULT 0,
    floor_hash  BLOB    NOT NULL DEFAULT x''
);
--bun:split
CREATE TABLE audit_events (
    company_id  TEXT     NOT NULL REFERENCES companies (id),
    seq         INTEGER  NOT NULL,
    at          TEXT     NOT NULL,
    agent_id    TEXT     NOT NULL,
    payload     BLOB     NOT NULL,
    prev_hash   BLOB     NOT NULL,
    hash        BLOB     NOT NULL,
    PRIMARY KEY (company_id, seq)
);
--bun:split
CREATE INDEX audit_events_time_idx ON audit_events (company_id, at);
--bun:split
CREATE TABLE audit_event_customers (
    company_id  TEXT    NOT NULL,
    customer_id INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (company_id, customer_id, seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
