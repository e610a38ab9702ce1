DROP FUNCTION audit_append(uuid, bigint, bytea, bigint, bytea, timestamptz, timestamptz, bytea, bigint[]);
