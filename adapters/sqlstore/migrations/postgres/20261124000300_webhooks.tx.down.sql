DROP INDEX records_change_idx;
--bun:split
DROP TABLE webhook_deliveries;
--bun:split
DROP TABLE webhook_endpoints;
