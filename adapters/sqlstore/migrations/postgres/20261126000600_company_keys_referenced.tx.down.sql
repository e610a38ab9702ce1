ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_company_id_endpoint_id_fkey;
--bun:split
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_pkey, ADD PRIMARY KEY (id), ADD CONSTRAINT webhook_endpoints_company_id_id_key UNIQUE (company_id, id);
--bun:split
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_company_id_endpoint_id_fkey
    FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE;
--bun:split
ALTER TABLE staff_passkeys DROP CONSTRAINT staff_passkeys_company_id_member_id_fkey;
--bun:split
ALTER TABLE staff_members DROP CONSTRAINT staff_members_pkey, ADD PRIMARY KEY (id), ADD CONSTRAINT staff_members_company_id_id_key UNIQUE (company_id, id);
--bun:split
ALTER TABLE staff_passkeys ADD CONSTRAINT staff_passkeys_company_id_member_id_fkey
    FOREIGN KEY (company_id, member_id) REFERENCES staff_members (company_id, id) ON DELETE CASCADE;
--bun:split
ALTER TABLE files DROP CONSTRAINT files_device_order_fkey;
--bun:split
ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_device_fkey;
--bun:split
ALTER TABLE appointment_spans DROP CONSTRAINT appointment_spans_company_id_appointment_id_fkey;
--bun:split
ALTER TABLE records DROP CONSTRAINT records_pkey, ADD PRIMARY KEY (id), ADD CONSTRAINT records_company_id_id_key UNIQUE (company_id, id);
--bun:split
ALTER TABLE files ADD CONSTRAINT files_device_order_fkey FOREIGN KEY (company_id, device_order_id) REFERENCES records (company_id, id);
--bun:split
ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_device_fkey FOREIGN KEY (company_id, device_id) REFERENCES records (company_id, id);
--bun:split
ALTER TABLE appointment_spans ADD CONSTRAINT appointment_spans_company_id_appointment_id_fkey
    FOREIGN KEY (company_id, appointment_id) REFERENCES records (company_id, id);
