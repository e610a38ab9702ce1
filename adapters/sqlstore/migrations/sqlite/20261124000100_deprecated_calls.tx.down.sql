DROP TABLE deprecated_calls;
--bun:split
DROP INDEX oauth_clients_company_id_id_key;
