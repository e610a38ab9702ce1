-- What has ended (a revoked token or client, a settings session signed
-- out), as SHA-256 digests, while it matters: every replica reads them and
-- refuses what they name even when a Redis failover lost the deletion.
-- Times are Unix milliseconds of the replica that buried the key.
CREATE TABLE tombstones (
    seq       BIGSERIAL PRIMARY KEY,
    key       BYTEA  NOT NULL,
    buried_ms BIGINT NOT NULL,
    until_ms  BIGINT NOT NULL
);
--bun:split
CREATE INDEX tombstones_buried_idx ON tombstones (buried_ms);
--bun:split
CREATE INDEX tombstones_until_idx ON tombstones (until_ms);
