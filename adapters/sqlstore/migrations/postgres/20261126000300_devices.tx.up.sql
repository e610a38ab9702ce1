-- Devices and their orders (docs/contract.md §14) are records of the kinds
-- devices and device-orders. A device's GDT id is unique in its company, an
-- order's number (field 8310) too; the counters hand out the numbers.
CREATE UNIQUE INDEX records_device_gdt_id_key ON records (company_id, (payload->>'gdt_id'))
    WHERE kind = 'devices' AND deleted_at IS NULL;
--bun:split
CREATE UNIQUE INDEX records_device_order_number_key ON records (company_id, ((payload->>'number')::bigint))
    WHERE kind = 'device-orders' AND (payload->>'number')::bigint > 0;
--bun:split
CREATE INDEX records_device_orders_open_idx ON records (company_id, (payload->>'device_id'), (payload->>'status'))
    WHERE kind = 'device-orders' AND deleted_at IS NULL;
--bun:split
CREATE TABLE counters (
    company_id uuid   NOT NULL REFERENCES companies (id),
    name       text   NOT NULL,
    value      bigint NOT NULL,
    PRIMARY KEY (company_id, name)
);
--bun:split
-- A client bound to a device is that device's credential for the bridge.
ALTER TABLE oauth_clients ADD COLUMN device_id uuid;
--bun:split
ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_device_fkey
    FOREIGN KEY (company_id, device_id) REFERENCES records (company_id, id);
--bun:split
-- A result file names the order it was matched to; order_match is matched
-- or unmatched for a device's result, null for any other file.
ALTER TABLE files ADD COLUMN device_order_id uuid;
--bun:split
ALTER TABLE files ADD COLUMN order_match text CHECK (order_match IN ('matched', 'unmatched'));
--bun:split
ALTER TABLE files ADD CONSTRAINT files_device_order_fkey
    FOREIGN KEY (company_id, device_order_id) REFERENCES records (company_id, id);
--bun:split
CREATE INDEX files_unmatched_idx ON files (company_id, created_at) WHERE order_match = 'unmatched';
