-- See the PostgreSQL migration. SQLite has one writer, so its change clock is
-- a counter bumped inside each write transaction: already in commit order.
CREATE TABLE change_clock (value INTEGER NOT NULL);
--bun:split
INSERT INTO change_clock (value) VALUES (0);
--bun:split
ALTER TABLE customers ADD COLUMN payload TEXT NOT NULL DEFAULT '{}';
--bun:split
UPDATE customers SET payload = json_object(
    'title', NULL, 'first_name', first_name, 'last_name', last_name, 'birth_date', birth_date,
    'sex', NULL, 'svnr', NULL, 'kvnr', NULL, 'insurer', NULL, 'insurer_name', NULL, 'email', NULL, 'phone', NULL,
    'address', NULL, 'iban', NULL, 'alerts', json('[]'));
--bun:split
ALTER TABLE customers ADD COLUMN svnr TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN change INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE customers ADD COLUMN deleted_at TEXT;
--bun:split
ALTER TABLE customers DROP COLUMN first_name;
--bun:split
ALTER TABLE customers DROP COLUMN last_name;
--bun:split
ALTER TABLE customers DROP COLUMN birth_date;
--bun:split
CREATE UNIQUE INDEX customers_company_id_id_key ON customers (company_id, id);
--bun:split
CREATE UNIQUE INDEX customers_svnr_idx ON customers (company_id, svnr) WHERE svnr IS NOT NULL AND deleted_at IS NULL;
--bun:split
CREATE INDEX customers_feed_idx ON customers (company_id, change, id);
--bun:split
-- SQLite cannot change a foreign key in place: the files table is rebuilt
-- with the composite key to (company_id, customer_id).
CREATE TABLE files_new (
    id           TEXT PRIMARY KEY,
    company_id   TEXT    NOT NULL REFERENCES companies (id),
    customer_id  INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         INTEGER NOT NULL CHECK (size >= 0),
    sha256       BLOB    NOT NULL,
    storage_key  TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL,
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
INSERT INTO files_new SELECT id, company_id, customer_id, name, content_type, size, sha256, storage_key, source, created_at, updated_at FROM files;
--bun:split
DROP TABLE files;
--bun:split
ALTER TABLE files_new RENAME TO files;
--bun:split
CREATE INDEX files_company_customer_idx ON files (company_id, customer_id, created_at);
--bun:split
CREATE TABLE records (
    id          TEXT PRIMARY KEY,
    company_id  TEXT    NOT NULL REFERENCES companies (id),
    kind        TEXT    NOT NULL,
    customer_id INTEGER,
    payload     TEXT    NOT NULL,
    change      INTEGER NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    deleted_at  TEXT,
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
CREATE INDEX records_feed_idx ON records (company_id, kind, change, id);
--bun:split
CREATE INDEX records_customer_feed_idx ON records (company_id, customer_id, kind, change, id);
--bun:split
CREATE TABLE idempotency_keys (
    company_id  TEXT    NOT NULL REFERENCES companies (id),
    client_id   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint BLOB    NOT NULL,
    status      INTEGER NOT NULL,
    location    TEXT    NOT NULL,
    body        BLOB    NOT NULL,
    created_at  TEXT    NOT NULL,
    PRIMARY KEY (company_id, client_id, key)
);
