ALTER TABLE files DROP COLUMN gdt, DROP COLUMN related_file_ids;
