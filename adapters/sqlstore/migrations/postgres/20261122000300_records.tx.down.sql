DROP TABLE idempotency_keys;
--bun:split
DROP TABLE records;
--bun:split
ALTER TABLE files
    DROP CONSTRAINT files_company_customer_fkey,
    ADD CONSTRAINT files_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customers (id);
--bun:split
ALTER TABLE customers
    ADD COLUMN first_name text,
    ADD COLUMN last_name text,
    ADD COLUMN birth_date date;
--bun:split
UPDATE customers SET first_name = payload->>'first_name', last_name = payload->>'last_name', birth_date = (payload->>'birth_date')::date;
--bun:split
ALTER TABLE customers
    ALTER COLUMN first_name SET NOT NULL,
    ALTER COLUMN last_name SET NOT NULL,
    DROP CONSTRAINT customers_company_id_id_key,
    DROP COLUMN payload,
    DROP COLUMN svnr,
    DROP COLUMN change,
    DROP COLUMN deleted_at;
