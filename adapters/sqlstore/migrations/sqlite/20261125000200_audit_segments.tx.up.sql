-- See the PostgreSQL migration. A block's customers are a JSON array here.
ALTER TABLE audit_blocks ADD COLUMN customers TEXT NOT NULL DEFAULT '[]';
--bun:split
UPDATE audit_blocks SET customers = (
    SELECT json_group_array(customer_id) FROM (
        SELECT customer_id FROM audit_block_customers c
         WHERE c.company_id = audit_blocks.company_id AND c.first_seq = audit_blocks.first_seq
         ORDER BY customer_id));
--bun:split
CREATE TABLE audit_customer_segments (
    company_id  TEXT    NOT NULL,
    customer_id INTEGER NOT NULL,
    segment     INTEGER NOT NULL,
    PRIMARY KEY (company_id, customer_id, segment),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
INSERT INTO audit_customer_segments (company_id, customer_id, segment)
SELECT DISTINCT company_id, customer_id, first_seq / 1024 FROM audit_block_customers;
--bun:split
DROP TABLE audit_block_customers;
