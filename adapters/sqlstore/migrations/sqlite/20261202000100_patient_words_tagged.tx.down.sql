UPDATE customers SET search_version = 2 WHERE search_version = 3;
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 2;
