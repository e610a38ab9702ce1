-- A client's public keys for signed client assertions (RFC 7523, SMART Backend Services),
-- by URL or inline, and the ids of the assertions it used: kept here, not in Redis, so that
-- a Redis failover cannot forget one and let an assertion be replayed (docs/contract.md §3).
ALTER TABLE oauth_clients ADD COLUMN jwks_url text;
--bun:split
ALTER TABLE oauth_clients ADD COLUMN jwks text;
--bun:split
CREATE TABLE oauth_assertion_ids (
    company_id uuid        NOT NULL,
    client_id  text        NOT NULL,
    jti        text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (company_id, client_id, jti),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id)
);
