-- Files join the sync feed: a change stamp and a tombstone time, like every
-- listed object; and the form fields of POST files.
ALTER TABLE files
    ADD COLUMN category    text   NOT NULL DEFAULT 'other',
    ADD COLUMN description text,
    ADD COLUMN change      bigint NOT NULL DEFAULT 0,
    ADD COLUMN deleted_at  timestamptz;
--bun:split
CREATE INDEX files_feed_idx ON files (company_id, change, id);
--bun:split
CREATE INDEX files_customer_feed_idx ON files (company_id, customer_id, change, id);
