-- See the PostgreSQL migration.
CREATE TABLE tombstones (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    key       BLOB    NOT NULL,
    buried_ms INTEGER NOT NULL,
    until_ms  INTEGER NOT NULL
);
--bun:split
CREATE INDEX tombstones_buried_idx ON tombstones (buried_ms);
--bun:split
CREATE INDEX tombstones_until_idx ON tombstones (until_ms);
