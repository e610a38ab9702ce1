ALTER TABLE files DROP COLUMN related_file_ids;
--bun:split
ALTER TABLE files DROP COLUMN gdt;
