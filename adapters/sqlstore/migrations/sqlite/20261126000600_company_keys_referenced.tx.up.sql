-- See the PostgreSQL migration: SQLite keeps its keys (a table's primary
-- key cannot change in place); it is never distributed.
SELECT 1;
