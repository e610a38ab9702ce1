-- See the PostgreSQL migration. SQLite adds no table constraint to an
-- existing table: the new references are the columns' own.
CREATE UNIQUE INDEX records_device_gdt_id_key ON records (company_id, json_extract(payload, '$.gdt_id'))
    WHERE kind = 'devices' AND deleted_at IS NULL;
--bun:split
CREATE UNIQUE INDEX records_device_order_number_key ON records (company_id, json_extract(payload, '$.number'))
    WHERE kind = 'device-orders' AND json_extract(payload, '$.number') > 0;
--bun:split
CREATE INDEX records_device_orders_open_idx ON records (company_id, json_extract(payload, '$.device_id'), json_extract(payload, '$.status'))
    WHERE kind = 'device-orders' AND deleted_at IS NULL;
--bun:split
CREATE TABLE counters (
    company_id TEXT    NOT NULL REFERENCES companies (id),
    name       TEXT    NOT NULL,
    value      INTEGER NOT NULL,
    PRIMARY KEY (company_id, name)
);
--bun:split
ALTER TABLE oauth_clients ADD COLUMN device_id TEXT REFERENCES records (id);
--bun:split
ALTER TABLE files ADD COLUMN device_order_id TEXT REFERENCES records (id);
--bun:split
ALTER TABLE files ADD COLUMN order_match TEXT CHECK (order_match IN ('matched', 'unmatched'));
--bun:split
CREATE INDEX files_unmatched_idx ON files (company_id, created_at) WHERE order_match = 'unmatched';
