ALTER TABLE oauth_clients DROP COLUMN previous_secret_hash, DROP COLUMN previous_secret_until;
