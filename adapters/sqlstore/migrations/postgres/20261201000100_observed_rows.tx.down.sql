ALTER TABLE files DROP COLUMN examined_from, DROP COLUMN examined_until;
--bun:split
DROP TABLE record_observed;
