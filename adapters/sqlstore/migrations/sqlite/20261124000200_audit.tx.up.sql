-- See the PostgreSQL migration.
CREATE TABLE audit_heads (
    company_id  TEXT    PRIMARY KEY REFERENCES companies (id),
    seq         INTEGER NOT NULL,
    hash        BLOB    NOT NULL,
    floor_seq   INTEGER NOT NULL DEFAULT 0,
    floor_hash  BLOB    NOT NULL DEFAULT x''
);
--bun:split
CREATE TABLE audit_blocks (
    company_id  TEXT    NOT NULL REFERENCES companies (id),
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    first_at    TEXT    NOT NULL,
    last_at     TEXT    NOT NULL,
    prev_hash   BLOB    NOT NULL,
    events      BLOB    NOT NULL,
    PRIMARY KEY (company_id, first_seq),
    CHECK (first_seq <= last_seq)
);
--bun:split
CREATE TABLE audit_block_customers (
    company_id  TEXT    NOT NULL,
    customer_id INTEGER NOT NULL,
    first_seq   INTEGER NOT NULL,
    PRIMARY KEY (company_id, customer_id, first_seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
