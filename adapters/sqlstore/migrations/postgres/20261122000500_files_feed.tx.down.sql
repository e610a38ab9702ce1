DROP INDEX files_customer_feed_idx;
--bun:split
DROP INDEX files_feed_idx;
--bun:split
ALTER TABLE files DROP COLUMN category, DROP COLUMN description, DROP COLUMN change, DROP COLUMN deleted_at;
