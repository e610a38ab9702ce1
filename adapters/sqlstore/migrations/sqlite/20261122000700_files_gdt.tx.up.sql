-- See the PostgreSQL migration.
ALTER TABLE files ADD COLUMN gdt TEXT;
--bun:split
ALTER TABLE files ADD COLUMN related_file_ids TEXT NOT NULL DEFAULT '[]';
