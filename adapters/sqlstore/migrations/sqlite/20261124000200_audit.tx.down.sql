DROP TABLE audit_block_customers;
--bun:split
DROP TABLE audit_blocks;
--bun:split
DROP TABLE audit_heads;
