-- One active service assignment per (user, service, location); no location = every location.
CREATE UNIQUE INDEX records_active_assignment_idx ON records
    (company_id, (payload->>'user_id'), (payload->>'service_id'), (COALESCE(payload->>'location_id', '')))
    WHERE kind = 'service-assignments' AND deleted_at IS NULL AND (payload->>'active') = 'true';
