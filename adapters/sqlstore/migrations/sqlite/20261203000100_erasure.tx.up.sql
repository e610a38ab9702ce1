-- A retention hold: the last day a company's data must be kept; until it has
-- passed, the company cannot be erased (docs/contract.md §9).
ALTER TABLE companies ADD COLUMN retention_hold TEXT;
--bun:split
-- What remains of an erased company: one record outside it (its column is
-- not company_id: no row of the company is left, and the schema walk that
-- proves it does not count this one).
CREATE TABLE company_erasures (
    company         TEXT    PRIMARY KEY,
    erased_at       TEXT    NOT NULL,
    erased_by       TEXT    NOT NULL,
    export_sha256   TEXT,
    rows_erased     INTEGER NOT NULL,
    audit_seq       INTEGER NOT NULL,
    audit_hash      TEXT    NOT NULL,
    blobs_erased    INTEGER NOT NULL DEFAULT 0,
    blobs_erased_at TEXT
);
