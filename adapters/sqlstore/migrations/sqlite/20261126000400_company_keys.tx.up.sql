-- See the PostgreSQL migration. An embedded SQLite database is one
-- deployment on one disk, never distributed: its keys stay as they are.
SELECT 1;
