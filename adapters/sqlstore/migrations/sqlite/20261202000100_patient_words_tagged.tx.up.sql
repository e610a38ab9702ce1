-- See the PostgreSQL migration. SQLite keeps its words in customer_words,
-- whose key leads with the company already, so nothing of its index
-- changes: the layout's number (search_version 3, one on both backends) is
-- raised in place, without indexing anyone again.
UPDATE customers SET search_version = 3 WHERE search_version = 2;
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 3;
