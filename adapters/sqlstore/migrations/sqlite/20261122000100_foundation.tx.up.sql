CREATE TABLE companies (
    id                 TEXT PRIMARY KEY,
    name               TEXT    NOT NULL,
    time_zone          TEXT    NOT NULL,
    plan               TEXT    NOT NULL,
    storage_quota      INTEGER NOT NULL CHECK (storage_quota >= 0),
    storage_used       INTEGER NOT NULL DEFAULT 0 CHECK (storage_used >= 0),
    upload_secret_hash BLOB    NOT NULL,
    created_at         TEXT    NOT NULL,
    updated_at         TEXT    NOT NULL
);
--bun:split
CREATE TABLE customers (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id TEXT NOT NULL REFERENCES companies (id),
    first_name TEXT NOT NULL,
    last_name  TEXT NOT NULL,
    birth_date TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
--bun:split
CREATE INDEX customers_company_id_idx ON customers (company_id, id);
--bun:split
CREATE TABLE files (
    id           TEXT PRIMARY KEY,
    company_id   TEXT    NOT NULL REFERENCES companies (id),
    customer_id  INTEGER NOT NULL REFERENCES customers (id),
    name         TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         INTEGER NOT NULL CHECK (size >= 0),
    sha256       BLOB    NOT NULL,
    storage_key  TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL
);
--bun:split
CREATE INDEX files_company_customer_idx ON files (company_id, customer_id, created_at);
