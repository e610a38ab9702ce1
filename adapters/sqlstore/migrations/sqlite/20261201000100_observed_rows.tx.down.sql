ALTER TABLE files DROP COLUMN examined_until;
--bun:split
ALTER TABLE files DROP COLUMN examined_from;
--bun:split
DROP TABLE record_observed;
