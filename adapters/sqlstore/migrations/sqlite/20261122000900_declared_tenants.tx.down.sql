ALTER TABLE companies DROP COLUMN catalog_version;
--bun:split
DROP INDEX oauth_clients_external_ref_key;
--bun:split
ALTER TABLE oauth_clients DROP COLUMN external_ref;
--bun:split
DROP INDEX companies_external_ref_key;
--bun:split
ALTER TABLE companies DROP COLUMN disabled_at;
--bun:split
ALTER TABLE companies DROP COLUMN external_ref;
