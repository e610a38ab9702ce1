DROP INDEX files_unmatched_idx;
--bun:split
ALTER TABLE files DROP COLUMN order_match;
--bun:split
ALTER TABLE files DROP COLUMN device_order_id;
--bun:split
ALTER TABLE oauth_clients DROP COLUMN device_id;
--bun:split
DROP TABLE counters;
--bun:split
DROP INDEX records_device_orders_open_idx;
--bun:split
DROP INDEX records_device_order_number_key;
--bun:split
DROP INDEX records_device_gdt_id_key;
