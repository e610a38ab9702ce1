DROP FUNCTION audit_append(uuid, bigint, bytea, bigint, bytea, timestamptz, timestamptz, bytea, bigint[], bigint[]);
--bun:split
CREATE TABLE audit_block_customers (
    company_id  uuid   NOT NULL,
    customer_id bigint NOT NULL,
    first_seq   bigint NOT NULL,
    PRIMARY KEY (company_id, customer_id, first_seq),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
INSERT INTO audit_block_customers (company_id, customer_id, first_seq)
SELECT company_id, unnest(customers), first_seq FROM audit_blocks;
--bun:split
DROP TABLE audit_customer_segments;
--bun:split
ALTER TABLE audit_blocks DROP COLUMN customers;
--bun:split
CREATE FUNCTION audit_append(p_company uuid, p_prev_seq bigint, p_prev_hash bytea, p_seq bigint, p_hash bytea,
                             p_first_at timestamptz, p_last_at timestamptz, p_events bytea, p_customers bigint[])
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_heads SET seq = p_seq, hash = p_hash
     WHERE company_id = p_company AND seq = p_prev_seq AND hash = p_prev_hash;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO audit_blocks (company_id, first_seq, last_seq, first_at, last_at, prev_hash, events)
    VALUES (p_company, p_prev_seq + 1, p_seq, p_first_at, p_last_at, p_prev_hash, p_events);
    INSERT INTO audit_block_customers (company_id, customer_id, first_seq)
    SELECT p_company, c, p_prev_seq + 1 FROM unnest(p_customers) AS c;
    RETURN true;
END
$$;
