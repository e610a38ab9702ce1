DROP INDEX customers_words_idx;
--bun:split
CREATE INDEX customers_words_idx ON customers USING gin (company_id, search_words) WITH (gin_pending_list_limit = 256);
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 2;
--bun:split
-- The words written since carry the tag: index them again without it.
UPDATE customers SET search_version = 1 WHERE search_version >= 2;
