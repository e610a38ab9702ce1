-- The words a customer is found by (docs/contract.md §15) move into its own
-- row: search_words, a tsvector of "field:word" lexemes written with the
-- row (adapters/sqlstore/patient_index.go), read through one GIN index led
-- by the company (btree_gin indexes the uuid beside the lexemes). A word
-- as a row of customer_words cost an import a row, a key entry and the
-- tenancy's foreign-key check each: an import of patients ran at 4,100 a
-- second against 10,000 without the index.
-- Every customer is indexed again by the backfill (search_version 2): until
-- a company's are, its search answers 503 search-index-building. A server
-- of the previous build still writes and reads customer_words while a
-- rolling upgrade runs; the next release's migration drops the table.
CREATE EXTENSION IF NOT EXISTS btree_gin;
--bun:split
ALTER TABLE customers ADD COLUMN search_words tsvector;
--bun:split
-- A GIN index takes new entries into a pending list that every search reads
-- whole until it is merged: at the default 4 MB a search after an import of
-- 100,000 patients took 11.5 ms against 1.6 (BenchmarkPatientSearch), and
-- without the list (fastupdate off) the import ran at 6,500 patients a
-- second against 7,600 with a list of 256 kB, whose searches took 1.75 ms.
CREATE INDEX customers_words_idx ON customers USING gin (company_id, search_words) WITH (gin_pending_list_limit = 256);
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 2;
--bun:split
-- The same for the contains-search's trigram indexes: after an import of
-- 100,000 patients family:contains took 3.8 ms (p50) with the default list,
-- 1.5 ms with this one; the import's rate did not move out of its noise.
ALTER INDEX customers_search_family_trgm_idx SET (gin_pending_list_limit = 256);
--bun:split
ALTER INDEX customers_search_given_trgm_idx SET (gin_pending_list_limit = 256);
