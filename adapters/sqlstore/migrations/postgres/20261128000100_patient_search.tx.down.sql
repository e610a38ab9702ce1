DROP INDEX customers_search_given_trgm_idx;
--bun:split
DROP INDEX customers_search_family_trgm_idx;
--bun:split
DROP TABLE customer_words;
--bun:split
ALTER TABLE customers
    DROP COLUMN search_family, DROP COLUMN search_given, DROP COLUMN birth_date, DROP COLUMN kvnr,
    DROP COLUMN phone, DROP COLUMN email, DROP COLUMN search_version;
