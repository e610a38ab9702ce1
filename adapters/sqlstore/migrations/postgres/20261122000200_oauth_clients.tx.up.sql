CREATE TABLE oauth_clients (
    id          text PRIMARY KEY,
    company_id  uuid        NOT NULL REFERENCES companies (id),
    name        text        NOT NULL,
    scopes      text        NOT NULL,
    secret_hash bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
--bun:split
CREATE INDEX oauth_clients_company_idx ON oauth_clients (company_id, created_at);
