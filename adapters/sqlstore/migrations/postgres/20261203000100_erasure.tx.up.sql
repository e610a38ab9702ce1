-- A retention hold: the last day a company's data must be kept; until it has
-- passed, the company cannot be erased (docs/contract.md §9).
ALTER TABLE companies ADD COLUMN retention_hold text CHECK (retention_hold ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$');
--bun:split
-- What remains of an erased company: one record outside it (its column is
-- not company_id: no row of the company is left, and the schema walk that
-- proves it does not count this one).
CREATE TABLE company_erasures (
    company         uuid        PRIMARY KEY,
    erased_at       timestamptz NOT NULL,
    erased_by       text        NOT NULL,
    export_sha256   text,
    rows_erased     bigint      NOT NULL,
    audit_seq       bigint      NOT NULL,
    audit_hash      text        NOT NULL,
    blobs_erased    bigint      NOT NULL DEFAULT 0,
    blobs_erased_at timestamptz
);
