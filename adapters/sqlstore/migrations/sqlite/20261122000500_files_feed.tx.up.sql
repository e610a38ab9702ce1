-- See the PostgreSQL migration.
ALTER TABLE files ADD COLUMN category TEXT NOT NULL DEFAULT 'other';
--bun:split
ALTER TABLE files ADD COLUMN description TEXT;
--bun:split
ALTER TABLE files ADD COLUMN change INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE files ADD COLUMN deleted_at TEXT;
--bun:split
CREATE INDEX files_feed_idx ON files (company_id, change, id);
--bun:split
CREATE INDEX files_customer_feed_idx ON files (company_id, customer_id, change, id);
