-- Calls that used something deprecated, per client and day (docs/contract.md §10):
-- whom an operator or a practice should warn before a sunset.
CREATE UNIQUE INDEX oauth_clients_company_id_id_key ON oauth_clients (company_id, id);
--bun:split
CREATE TABLE deprecated_calls (
    company_id uuid   NOT NULL,
    client_id  text   NOT NULL,
    operation  text   NOT NULL,
    day        date   NOT NULL,
    calls      bigint NOT NULL CHECK (calls > 0),
    PRIMARY KEY (company_id, client_id, operation, day),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id)
);
