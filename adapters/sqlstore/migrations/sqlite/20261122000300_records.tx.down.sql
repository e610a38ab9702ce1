-- Drops the new tables only: customers keep their payload (SQLite would have
-- to rebuild the table to restore the old columns); restore a backup to go back further.
DROP TABLE idempotency_keys;
--bun:split
DROP TABLE records;
--bun:split
DROP TABLE change_clock;
