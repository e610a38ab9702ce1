-- Companies and clients declared as Kubernetes resources are found again by
-- the resource's UID (external_ref), so a repeated or crashed reconcile never
-- makes a second one; a disabled company uploads nothing and gets no tokens.
-- catalog_version counts writes to the booking catalogue's sections.
ALTER TABLE companies ADD COLUMN external_ref TEXT;
--bun:split
ALTER TABLE companies ADD COLUMN disabled_at TEXT;
--bun:split
CREATE UNIQUE INDEX companies_external_ref_key ON companies (external_ref) WHERE external_ref IS NOT NULL;
--bun:split
ALTER TABLE oauth_clients ADD COLUMN external_ref TEXT;
--bun:split
CREATE UNIQUE INDEX oauth_clients_external_ref_key ON oauth_clients (company_id, external_ref) WHERE external_ref IS NOT NULL;
--bun:split
ALTER TABLE companies ADD COLUMN catalog_version INTEGER NOT NULL DEFAULT 0;
