DROP TABLE company_erasures;
--bun:split
ALTER TABLE companies DROP COLUMN retention_hold;
