-- See the PostgreSQL migration.
CREATE UNIQUE INDEX oauth_clients_company_id_id_key ON oauth_clients (company_id, id);
--bun:split
CREATE TABLE deprecated_calls (
    company_id TEXT    NOT NULL,
    client_id  TEXT    NOT NULL,
    operation  TEXT    NOT NULL,
    day        TEXT    NOT NULL,
    calls      INTEGER NOT NULL CHECK (calls > 0),
    PRIMARY KEY (company_id, client_id, operation, day),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id)
);
