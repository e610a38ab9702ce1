-- See the PostgreSQL migration.
CREATE TABLE fhir_exports (
    company_id       TEXT    NOT NULL REFERENCES companies (id),
    id               TEXT    NOT NULL,
    client_id        TEXT    NOT NULL,
    scopes           TEXT    NOT NULL,
    patients         BOOLEAN NOT NULL,
    types            TEXT    NOT NULL,
    since            TEXT,
    since_cut        INTEGER NOT NULL,
    cut              INTEGER NOT NULL,
    transaction_time TEXT    NOT NULL,
    request          TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    progress         TEXT    NOT NULL,
    error            TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_until      TEXT,
    created_at       TEXT    NOT NULL,
    completed_at     TEXT,
    expires_at       TEXT    NOT NULL,
    PRIMARY KEY (company_id, id),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX fhir_exports_waiting ON fhir_exports (created_at) WHERE state IN ('accepted', 'running');
--bun:split
CREATE INDEX fhir_exports_cut ON fhir_exports (company_id, transaction_time) WHERE completed_at IS NOT NULL;
--bun:split
CREATE TABLE fhir_export_files (
    company_id TEXT    NOT NULL,
    export_id  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    count      INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (company_id, name),
    FOREIGN KEY (company_id, export_id) REFERENCES fhir_exports (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX fhir_export_files_export ON fhir_export_files (company_id, export_id, seq);
