-- A company's lease: one import or restore of a company at a time, across
-- processes and replicas (docs/contract.md §6). The holder renews it while
-- it works; a crashed holder's lease runs out (expires_at, Unix ms).
CREATE TABLE company_leases (
    company_id  uuid   PRIMARY KEY REFERENCES companies (id),
    holder      text   NOT NULL,
    purpose     text   NOT NULL,
    acquired_at bigint NOT NULL,
    expires_at  bigint NOT NULL
);
