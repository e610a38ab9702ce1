-- A rotated client secret goes on working until previous_secret_until, so
-- that an integrator can switch without a gap (only its hash is kept).
ALTER TABLE oauth_clients
    ADD COLUMN previous_secret_hash  bytea,
    ADD COLUMN previous_secret_until timestamptz;
