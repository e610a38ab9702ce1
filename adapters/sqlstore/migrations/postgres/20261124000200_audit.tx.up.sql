-- The audit trail (docs/contract.md §11). Each company's events form a hash
-- chain by seq; audit_heads holds the chain's end (locked by every append,
-- so a company's events are sealed one after another) and the checkpoint a
-- sweep leaves where it cut the chain. Events are kept in blocks: one row
-- per append (a group commit's events of one company), so that a read's
-- event costs the database a share of one row, not a row and its indexes.
CREATE TABLE audit_heads (
    company_id  uuid   PRIMARY KEY REFERENCES companies (id),
    seq         bigint NOT NULL,
    hash        bytea  NOT NULL,
    floor_seq   bigint NOT NULL DEFAULT 0,
    floor_hash  bytea  NOT NULL DEFAULT ''::bytea
);
--bun:split
CREATE TABLE audit_blocks (
    company_id  uuid        NOT NULL REFERENCES companies (id),
    first_seq   bigint      NOT NULL,
    last_seq    bigint      NOT NULL,
    first_at    timestamptz NOT NULL,
    last_at     timestamptz NOT NULL,
    prev_hash   bytea       NOT NULL,
    events      bytea       NOT NULL,
    PRIMARY KEY (company_id, first_seq),
    CHECK (first_seq <= last_seq)
);
--bun:split
-- Who accessed customer X: one row per customer a block's events reached.
-- The composite key lets an event name only its own company's customers.
CREATE TABLE audit_block_customers (
    company_id  uuid   NOT NULL,
    customer_id bigint NOT NULL,
    first_seq   bigint NOT NULL,
    PRIMARY KEY (company_id, customer_id, first_seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
