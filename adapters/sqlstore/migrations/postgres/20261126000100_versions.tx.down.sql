ALTER TABLE files DROP COLUMN version;
--bun:split
ALTER TABLE records DROP COLUMN version;
--bun:split
ALTER TABLE customers DROP COLUMN version;
