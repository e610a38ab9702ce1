-- See the PostgreSQL migration.
ALTER TABLE oauth_clients ADD COLUMN jwks_url TEXT;
--bun:split
ALTER TABLE oauth_clients ADD COLUMN jwks TEXT;
--bun:split
CREATE TABLE oauth_assertion_ids (
    company_id TEXT NOT NULL,
    client_id  TEXT NOT NULL,
    jti        TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (company_id, client_id, jti),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id)
);
