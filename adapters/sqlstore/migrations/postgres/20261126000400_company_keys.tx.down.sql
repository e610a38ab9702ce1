ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (id);
--bun:split
ALTER TABLE staff_passkeys DROP CONSTRAINT staff_passkeys_pkey, ADD PRIMARY KEY (id);
--bun:split
ALTER TABLE files DROP CONSTRAINT files_pkey, ADD PRIMARY KEY (id);
