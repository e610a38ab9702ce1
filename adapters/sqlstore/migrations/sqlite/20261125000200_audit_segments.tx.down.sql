CREATE TABLE audit_block_customers (
    company_id  TEXT    NOT NULL,
    customer_id INTEGER NOT NULL,
    first_seq   INTEGER NOT NULL,
    PRIMARY KEY (company_id, customer_id, first_seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
INSERT INTO audit_block_customers (company_id, customer_id, first_seq)
SELECT b.company_id, c.value, b.first_seq FROM audit_blocks b, json_each(b.customers) c;
--bun:split
DROP TABLE audit_customer_segments;
--bun:split
ALTER TABLE audit_blocks DROP COLUMN customers;
