-- FHIR Bulk Data exports (docs/contract.md §15): the jobs, so that any replica answers their
-- status and a restart loses none, and the NDJSON files each wrote to the blob store (the
-- orphan sweep keeps a file a job names). A job's row outlives its files by 30 days: the cut
-- of its transactionTime answers a later _since exactly.
CREATE TABLE fhir_exports (
    company_id       uuid        NOT NULL REFERENCES companies (id),
    id               uuid        NOT NULL,
    client_id        text        NOT NULL,
    scopes           text        NOT NULL,
    patients         boolean     NOT NULL,
    types            text        NOT NULL,
    since            timestamptz,
    since_cut        bigint      NOT NULL,
    cut              bigint      NOT NULL,
    transaction_time timestamptz NOT NULL,
    request          text        NOT NULL,
    state            text        NOT NULL,
    progress         text        NOT NULL,
    error            text        NOT NULL,
    attempts         integer     NOT NULL,
    lease_owner      text,
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL,
    completed_at     timestamptz,
    expires_at       timestamptz NOT NULL,
    PRIMARY KEY (company_id, id),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX fhir_exports_waiting ON fhir_exports (created_at) WHERE state IN ('accepted', 'running');
--bun:split
CREATE INDEX fhir_exports_cut ON fhir_exports (company_id, transaction_time) WHERE completed_at IS NOT NULL;
--bun:split
CREATE TABLE fhir_export_files (
    company_id uuid    NOT NULL,
    export_id  uuid    NOT NULL,
    name       text    NOT NULL,
    type       text    NOT NULL,
    count      bigint  NOT NULL,
    seq        integer NOT NULL,
    PRIMARY KEY (company_id, name),
    FOREIGN KEY (company_id, export_id) REFERENCES fhir_exports (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX fhir_export_files_export ON fhir_export_files (company_id, export_id, seq);
