-- The audit trail (docs/contract.md §11). Each company's events form a hash
-- chain by seq; audit_heads holds the chain's end (locked by every append,
-- so a company's events are sealed one after another) and the checkpoint a
-- sweep leaves where it cut the chain.
CREATE TABLE audit_heads (
    company_id  uuid   PRIMARY KEY REFERENCES companies (id),
    seq         bigint NOT NULL,
    hash        bytea  NOT NULL,
    floor_seq   bigint NOT NULL DEFAULT 0,
    floor_hash  bytea  NOT NULL DEFAULT ''::bytea
);
--bun:split
CREATE TABLE audit_events (
    company_id  uuid        NOT NULL REFERENCES companies (id),
    seq         bigint      NOT NULL,
    at          timestamptz NOT NULL,
    agent_id    text        NOT NULL,
    payload     bytea       NOT NULL,
    prev_hash   bytea       NOT NULL,
    hash        bytea       NOT NULL,
    PRIMARY KEY (company_id, seq)
);
--bun:split
CREATE INDEX audit_events_time_idx ON audit_events (company_id, at);
--bun:split
-- Who accessed customer X: one row per customer an event touched. The
-- composite keys let an event name only its own company's customers.
CREATE TABLE audit_event_customers (
    company_id  uuid   NOT NULL,
    customer_id bigint NOT NULL,
    seq         bigint NOT NULL,
    PRIMARY KEY (company_id, customer_id, seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
