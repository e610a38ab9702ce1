CREATE TABLE oauth_clients (
    id          TEXT PRIMARY KEY,
    company_id  TEXT NOT NULL REFERENCES companies (id),
    name        TEXT NOT NULL,
    scopes      TEXT NOT NULL,
    secret_hash BLOB NOT NULL,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
--bun:split
CREATE INDEX oauth_clients_company_idx ON oauth_clients (company_id, created_at);
