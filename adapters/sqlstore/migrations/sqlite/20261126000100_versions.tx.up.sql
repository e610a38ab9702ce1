-- See the PostgreSQL migration.
ALTER TABLE customers ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
--bun:split
ALTER TABLE records ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
--bun:split
ALTER TABLE files ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
