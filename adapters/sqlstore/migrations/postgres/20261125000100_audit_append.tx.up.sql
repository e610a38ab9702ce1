-- One append of the audit trail's group commit (docs/contract.md §11): the
-- block and the customers it reached are written only if the company's head
-- still is the link the caller sealed after, and the head moves with them;
-- false when it has moved (another replica wrote). A function rather than
-- one statement from the client, so that PostgreSQL plans its statements
-- once per connection instead of once per batch: the plan was a fifth of
-- what an append cost the database.
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
