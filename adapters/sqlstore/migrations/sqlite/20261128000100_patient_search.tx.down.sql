DROP TABLE customer_words;
--bun:split
DROP INDEX customers_unindexed_idx;
--bun:split
DROP INDEX customers_email_idx;
--bun:split
DROP INDEX customers_phone_idx;
--bun:split
DROP INDEX customers_kvnr_idx;
--bun:split
DROP INDEX customers_birth_date_idx;
--bun:split
ALTER TABLE customers DROP COLUMN search_family;
--bun:split
ALTER TABLE customers DROP COLUMN search_given;
--bun:split
ALTER TABLE customers DROP COLUMN birth_date;
--bun:split
ALTER TABLE customers DROP COLUMN kvnr;
--bun:split
ALTER TABLE customers DROP COLUMN phone;
--bun:split
ALTER TABLE customers DROP COLUMN email;
--bun:split
ALTER TABLE customers DROP COLUMN search_version;
