-- A GDT file's examination metadata and the files of its request it references.
ALTER TABLE files
    ADD COLUMN gdt              json,
    ADD COLUMN related_file_ids json NOT NULL DEFAULT '[]';
