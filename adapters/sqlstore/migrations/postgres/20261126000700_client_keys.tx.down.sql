DROP TABLE oauth_assertion_ids;
--bun:split
ALTER TABLE oauth_clients DROP COLUMN jwks;
--bun:split
ALTER TABLE oauth_clients DROP COLUMN jwks_url;
