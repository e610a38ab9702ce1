-- Distribution by company: the primary keys that can name the company do
-- (adapters/sqlstore/schema_keys_test.go lists the rest, each with why).
-- Every query of these tables names the company already; nothing refers
-- to them by id alone.
ALTER TABLE files DROP CONSTRAINT files_pkey, ADD PRIMARY KEY (company_id, id);
--bun:split
ALTER TABLE staff_passkeys DROP CONSTRAINT staff_passkeys_pkey, ADD PRIMARY KEY (company_id, id);
--bun:split
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (company_id, id);
