UPDATE customers SET search_version = 1 WHERE search_version = 2;
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 1;
