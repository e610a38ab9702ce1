-- Finding a patient (docs/contract.md §15): what a search compares is kept
-- beside each customer's payload, written with it by every path that writes
-- a customer (adapters/sqlstore/patient_index.go) and, for customers written
-- before this migration, by the backfill (search_version 0 until it has run).
-- Names are folded in Go (domain/names: ü = ue = u, ß = ss): neither unaccent
-- nor a collation knows the German name-list spellings.
ALTER TABLE customers
    ADD COLUMN search_family  text COLLATE "C",
    ADD COLUMN search_given   text COLLATE "C",
    ADD COLUMN birth_date     text,
    ADD COLUMN kvnr           text,
    ADD COLUMN phone          text,
    ADD COLUMN email          text,
    ADD COLUMN search_version smallint NOT NULL DEFAULT 0;
--bun:split
-- The words each customer is found by: a name's folded words and the Kölner
-- Phonetik codes of both names'. A prefix search is a range of this key.
CREATE TABLE customer_words (
    company_id  uuid   NOT NULL,
    field       text   NOT NULL,
    word        text   COLLATE "C" NOT NULL,
    customer_id bigint NOT NULL,
    PRIMARY KEY (company_id, field, word, customer_id),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX customer_words_customer_idx ON customer_words (company_id, customer_id);
--bun:split
CREATE INDEX customers_birth_date_idx ON customers (company_id, birth_date) WHERE birth_date IS NOT NULL;
--bun:split
CREATE INDEX customers_kvnr_idx ON customers (company_id, kvnr) WHERE kvnr IS NOT NULL;
--bun:split
CREATE INDEX customers_phone_idx ON customers (company_id, phone) WHERE phone IS NOT NULL;
--bun:split
CREATE INDEX customers_email_idx ON customers (company_id, email) WHERE email IS NOT NULL;
--bun:split
-- The customers the backfill has still to index: empty once it has run.
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 1;
--bun:split
-- A contains-search (family:contains=üll) reads the trigram indexes of the
-- folded names; they cannot lead with the company (a GIN index of a uuid
-- needs btree_gin), the company's condition is checked on the rows found.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--bun:split
CREATE INDEX customers_search_family_trgm_idx ON customers USING gin (search_family gin_trgm_ops);
--bun:split
CREATE INDEX customers_search_given_trgm_idx ON customers USING gin (search_given gin_trgm_ops);
