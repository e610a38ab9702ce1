-- Who accessed customer X, indexed per segment of the chain instead of per
-- block (docs/contract.md §11). A block belongs to the segment of its first
-- seq: first_seq / 1024. audit_customer_segments holds one row per customer
-- a segment's blocks reached, written once per segment (ON CONFLICT DO
-- NOTHING), so a customer read often costs the write path one row per 1,024
-- events instead of one row and one index entry per block. Within a
-- segment, a block's own customers column tells which blocks to decompress;
-- the composite key still lets an event name only its own company's
-- customers: every customer of a block's column has its segment row.
ALTER TABLE audit_blocks ADD COLUMN customers bigint[] NOT NULL DEFAULT '{}';
--bun:split
UPDATE audit_blocks b SET customers = c.ids
  FROM (SELECT company_id, first_seq, array_agg(customer_id ORDER BY customer_id) AS ids
          FROM audit_block_customers GROUP BY company_id, first_seq) c
 WHERE b.company_id = c.company_id AND b.first_seq = c.first_seq;
--bun:split
CREATE TABLE audit_customer_segments (
    company_id  uuid   NOT NULL,
    customer_id bigint NOT NULL,
    segment     bigint NOT NULL,
    PRIMARY KEY (company_id, customer_id, segment),
    FOREIGN KEY (company_id, customer_id) REFERENCES customers (company_id, id)
);
--bun:split
INSERT INTO audit_customer_segments (company_id, customer_id, segment)
SELECT DISTINCT company_id, customer_id, first_seq / 1024 FROM audit_block_customers;
--bun:split
DROP TABLE audit_block_customers;
--bun:split
DROP FUNCTION audit_append(uuid, bigint, bytea, bigint, bytea, timestamptz, timestamptz, bytea, bigint[]);
--bun:split
-- As before (20261125000100), with the block's customers in its column and
-- p_indexed, those of them its segment may not have yet, in the segment's
-- index.
CREATE FUNCTION audit_append(p_company uuid, p_prev_seq bigint, p_prev_hash bytea, p_seq bigint, p_hash bytea,
                             p_first_at timestamptz, p_last_at timestamptz, p_events bytea, p_customers bigint[],
                             p_indexed bigint[])
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_heads SET seq = p_seq, hash = p_hash
     WHERE company_id = p_company AND seq = p_prev_seq AND hash = p_prev_hash;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO audit_blocks (company_id, first_seq, last_seq, first_at, last_at, prev_hash, events, customers)
    VALUES (p_company, p_prev_seq + 1, p_seq, p_first_at, p_last_at, p_prev_hash, p_events, p_customers);
    INSERT INTO audit_customer_segments (company_id, customer_id, segment)
    SELECT p_company, c, (p_prev_seq + 1) / 1024 FROM unnest(p_indexed) AS c
        ON CONFLICT DO NOTHING;
    RETURN true;
END
$$;
