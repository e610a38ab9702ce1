-- Observed rows: what a search of Observations and reports compares (FHIR
-- `code` and `date`, docs/contract.md §15), kept by the record store beside
-- each measurement and lab result (domain.ObservedOf, HookObserved): a
-- measurement is row 0; a lab result is row 0 (the report, no code) and one
-- row per result (1, 2, …) with its LOINC code, each when its sample was
-- collected. Times are the range [from, until) the value spells, in Unix
-- milliseconds (both backends compare the same integers); NULL: unknown.
-- A search is a condition of the feed's query: records.id IN (rows that hold).
CREATE TABLE record_observed (
    company_id     uuid    NOT NULL,
    record_id      uuid    NOT NULL,
    row_no         integer NOT NULL CHECK (row_no >= 0),
    code           text    NOT NULL,
    observed_from  bigint,
    observed_until bigint,
    PRIMARY KEY (company_id, record_id, row_no),
    FOREIGN KEY (company_id, record_id) REFERENCES records (company_id, id),
    CHECK (observed_from < observed_until)
);
--bun:split
CREATE INDEX record_observed_code_idx ON record_observed (company_id, code) WHERE code <> '';
--bun:split
CREATE INDEX record_observed_from_idx ON record_observed (company_id, observed_from);
--bun:split
-- The rows of what is stored already. Payload times are RFC 3339 at the
-- second (domain.DateTime), so each spells one second.
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT company_id, id, 0, COALESCE(payload->>'loinc_code', ''),
       (extract(epoch FROM (payload->>'measured_at')::timestamptz) * 1000)::bigint,
       (extract(epoch FROM (payload->>'measured_at')::timestamptz) * 1000)::bigint + 1000
FROM records WHERE kind = 'measurements' AND deleted_at IS NULL;
--bun:split
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT company_id, id, 0, '',
       (extract(epoch FROM (payload->>'collected_at')::timestamptz) * 1000)::bigint,
       (extract(epoch FROM (payload->>'collected_at')::timestamptz) * 1000)::bigint + 1000
FROM records WHERE kind = 'lab-results' AND deleted_at IS NULL;
--bun:split
INSERT INTO record_observed (company_id, record_id, row_no, code, observed_from, observed_until)
SELECT r.company_id, r.id, e.n, COALESCE(e.v->>'loinc_code', ''),
       (extract(epoch FROM (r.payload->>'collected_at')::timestamptz) * 1000)::bigint,
       (extract(epoch FROM (r.payload->>'collected_at')::timestamptz) * 1000)::bigint + 1000
FROM records r
CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(r.payload->'results') = 'array' THEN r.payload->'results' ELSE '[]'::json END)
    WITH ORDINALITY AS e(v, n)
WHERE r.kind = 'lab-results' AND r.deleted_at IS NULL;
--bun:split
-- A device's GDT result: when it examined (8402's 6200/6201: examined_at
-- at the second, else examined_on, the day in UTC), in Unix milliseconds.
ALTER TABLE files ADD COLUMN examined_from bigint, ADD COLUMN examined_until bigint;
--bun:split
UPDATE files SET
    examined_from = CASE
        WHEN gdt->>'examined_at' IS NOT NULL THEN (extract(epoch FROM (gdt->>'examined_at')::timestamptz) * 1000)::bigint
        ELSE (extract(epoch FROM (gdt->>'examined_on')::date::timestamp AT TIME ZONE 'UTC') * 1000)::bigint END,
    examined_until = CASE
        WHEN gdt->>'examined_at' IS NOT NULL THEN (extract(epoch FROM (gdt->>'examined_at')::timestamptz) * 1000)::bigint + 1000
        ELSE (extract(epoch FROM (gdt->>'examined_on')::date::timestamp AT TIME ZONE 'UTC') * 1000)::bigint + 86400000 END
WHERE gdt IS NOT NULL AND (gdt->>'examined_at' IS NOT NULL OR gdt->>'examined_on' IS NOT NULL);
