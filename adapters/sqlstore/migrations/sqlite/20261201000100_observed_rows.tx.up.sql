-- See the PostgreSQL migration.
CREATE TABLE record_observed (
    company_id     TEXT    NOT NULL,
    record_id      TEXT    NOT NULL,
    row_no         INTEGER NOT NULL CHECK (row_no >= 0),
    code           TEXT    NOT NULL,
    observed_from  INTEGER,
    observed_until INTEGER,
    PRIMARY KEY (company_id, record_id, row_no),
    FOREIGN KEY (company_id, record_id) REFERENCES records (company_id, id),
    CHECK (observed_from < observed_until)
);
--bun:split
CREATE INDEX record_observed_code_idx ON record_observed (company_id, code) WHERE code <> '';
--bun:split
CREATE INDEX record_observed_from_idx ON record_observed (company_id, observed_from);
--bun:split
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT company_id, id, 0, COALESCE(json_extract(payload, '$.loinc_code'), ''),
       unixepoch(json_extract(payload, '$.measured_at')) * 1000,
       unixepoch(json_extract(payload, '$.measured_at')) * 1000 + 1000
FROM records WHERE kind = 'measurements' AND deleted_at IS NULL;
--bun:split
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT company_id, id, 0, '',
       unixepoch(json_extract(payload, '$.collected_at')) * 1000,
       unixepoch(json_extract(payload, '$.collected_at')) * 1000 + 1000
FROM records WHERE kind = 'lab-results' AND deleted_at IS NULL;
--bun:split
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT r.company_id, r.id, e.key + 1, COALESCE(json_extract(e.value, '$.loinc_code'), ''),
       unixepoch(json_extract(r.payload, '$.collected_at')) * 1000,
       unixepoch(json_extract(r.payload, '$.collected_at')) * 1000 + 1000
FROM records r, json_each(r.payload, '$.results') e
WHERE r.kind = 'lab-results' AND r.deleted_at IS NULL;
--bun:split
ALTER TABLE files ADD COLUMN examined_from INTEGER;
--bun:split
ALTER TABLE files ADD COLUMN examined_until INTEGER;
--bun:split
UPDATE files SET
    examined_from = CASE
        WHEN json_extract(gdt, '$.examined_at') IS NOT NULL THEN unixepoch(json_extract(gdt, '$.examined_at')) * 1000
        ELSE unixepoch(json_extract(gdt, '$.examined_on')) * 1000 END,
    examined_until = CASE
        WHEN json_extract(gdt, '$.examined_at') IS NOT NULL THEN unixepoch(json_extract(gdt, '$.examined_at')) * 1000 + 1000
        ELSE unixepoch(json_extract(gdt, '$.examined_on')) * 1000 + 86400000 END
WHERE gdt IS NOT NULL AND (json_extract(gdt, '$.examined_at') IS NOT NULL OR json_extract(gdt, '$.examined_on') IS NOT NULL);
