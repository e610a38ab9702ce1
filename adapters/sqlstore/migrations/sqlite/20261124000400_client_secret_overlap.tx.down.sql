ALTER TABLE oauth_clients DROP COLUMN previous_secret_until;
--bun:split
ALTER TABLE oauth_clients DROP COLUMN previous_secret_hash;
