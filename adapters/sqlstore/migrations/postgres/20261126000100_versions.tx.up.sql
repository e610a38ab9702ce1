-- Every object that can change counts its own changes (docs/contract.md §4,
-- "Versions"): 1 when made, one more on every write and on its deletion. It
-- is the object's own counter, not the change clock, which all companies
-- share. Objects made before this migration start at 1.
ALTER TABLE customers ADD COLUMN version bigint NOT NULL DEFAULT 1;
--bun:split
ALTER TABLE records ADD COLUMN version bigint NOT NULL DEFAULT 1;
--bun:split
ALTER TABLE files ADD COLUMN version bigint NOT NULL DEFAULT 1;
