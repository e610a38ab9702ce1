-- Customers become objects of the resource API: every field in one JSON
-- payload (kept as written, in field order: json, not jsonb), the change
-- stamp of the sync feed and a tombstone time.
ALTER TABLE customers ADD COLUMN payload json;
--bun:split
UPDATE customers SET payload = json_build_object(
    'title', NULL, 'first_name', first_name, 'last_name', last_name, 'birth_date', to_char(birth_date, 'YYYY-MM-DD'),
    'sex', NULL, 'svnr', NULL, 'kvnr', NULL, 'insurer', NULL, 'insurer_name', NULL, 'email', NULL, 'phone', NULL,
    'address', NULL, 'iban', NULL, 'alerts', '[]'::json);
--bun:split
ALTER TABLE customers
    ALTER COLUMN payload SET NOT NULL,
    ADD COLUMN svnr text,
    ADD COLUMN change bigint NOT NULL DEFAULT 0,
    ADD COLUMN deleted_at timestamptz,
    DROP COLUMN first_name,
    DROP COLUMN last_name,
    DROP COLUMN birth_date,
    ADD CONSTRAINT customers_company_id_id_key UNIQUE (company_id, id);
--bun:split
CREATE UNIQUE INDEX customers_svnr_idx ON customers (company_id, svnr) WHERE svnr IS NOT NULL AND deleted_at IS NULL;
--bun:split
CREATE INDEX customers_feed_idx ON customers (company_id, change, id);
--bun:split
-- A file of one practice can never name another practice's patient.
ALTER TABLE files
    DROP CONSTRAINT files_customer_id_fkey,
    ADD CONSTRAINT files_company_customer_fkey FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id);
--bun:split
CREATE TABLE records (
    id          uuid PRIMARY KEY,
    company_id  uuid        NOT NULL REFERENCES companies (id),
    kind        text        NOT NULL,
    customer_id bigint,
    payload     json        NOT NULL,
    change      bigint      NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz,
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
CREATE INDEX records_feed_idx ON records (company_id, kind, change, id);
--bun:split
CREATE INDEX records_customer_feed_idx ON records (company_id, customer_id, kind, change, id);
--bun:split
CREATE TABLE idempotency_keys (
    company_id  uuid        NOT NULL REFERENCES companies (id),
    client_id   text        NOT NULL,
    key         text        NOT NULL,
    fingerprint bytea       NOT NULL,
    status      integer     NOT NULL,
    location    text        NOT NULL,
    body        bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (company_id, client_id, key)
);
