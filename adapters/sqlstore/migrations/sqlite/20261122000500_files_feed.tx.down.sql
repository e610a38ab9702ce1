DROP INDEX files_customer_feed_idx;
--bun:split
DROP INDEX files_feed_idx;
--bun:split
ALTER TABLE files DROP COLUMN deleted_at;
--bun:split
ALTER TABLE files DROP COLUMN change;
--bun:split
ALTER TABLE files DROP COLUMN description;
--bun:split
ALTER TABLE files DROP COLUMN category;
