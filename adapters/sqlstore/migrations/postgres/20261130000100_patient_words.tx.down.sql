ALTER INDEX customers_search_family_trgm_idx RESET (gin_pending_list_limit);
--bun:split
ALTER INDEX customers_search_given_trgm_idx RESET (gin_pending_list_limit);
--bun:split
DROP INDEX customers_words_idx;
--bun:split
ALTER TABLE customers DROP COLUMN search_words;
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 1;
--bun:split
-- customer_words is stale for the customers written since: index them again.
UPDATE customers SET search_version = 0;
