-- See the PostgreSQL migration.
ALTER TABLE oauth_clients ADD COLUMN previous_secret_hash BLOB;
--bun:split
ALTER TABLE oauth_clients ADD COLUMN previous_secret_until TEXT;
