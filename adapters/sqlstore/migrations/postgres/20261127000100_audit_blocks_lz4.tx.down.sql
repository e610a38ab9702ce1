ALTER TABLE audit_blocks ALTER COLUMN events SET COMPRESSION default;
