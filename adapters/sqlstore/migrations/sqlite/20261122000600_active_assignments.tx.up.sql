-- See the PostgreSQL migration.
CREATE UNIQUE INDEX records_active_assignment_idx ON records
    (company_id, json_extract(payload, '$.user_id'), json_extract(payload, '$.service_id'), COALESCE(json_extract(payload, '$.location_id'), ''))
    WHERE kind = 'service-assignments' AND deleted_at IS NULL AND json_extract(payload, '$.active') = 1;
