-- See the PostgreSQL migration. SQLite has no trigram index here: a
-- contains-search reads the company's customers' folded names (it needs
-- three characters, as trigrams would).
ALTER TABLE customers ADD COLUMN search_family TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN search_given TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN birth_date TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN kvnr TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN phone TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN email TEXT;
--bun:split
ALTER TABLE customers ADD COLUMN search_version INTEGER NOT NULL DEFAULT 0;
--bun:split
CREATE TABLE customer_words (
    company_id  TEXT    NOT NULL,
    field       TEXT    NOT NULL,
    word        TEXT    NOT NULL,
    customer_id INTEGER NOT NULL,
    PRIMARY KEY (company_id, field, word, customer_id),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
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
CREATE INDEX customers_unindexed_idx ON customers (company_id, id) WHERE search_version < 1;
