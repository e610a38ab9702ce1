-- A company's lease: one import or restore of a company at a time, across
-- processes (docs/contract.md §6). The holder renews it while it works; a
-- crashed holder's lease runs out (expires_at, Unix ms).
CREATE TABLE company_leases (
    company_id  TEXT    PRIMARY KEY REFERENCES companies (id),
    holder      TEXT    NOT NULL,
    purpose     TEXT    NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
