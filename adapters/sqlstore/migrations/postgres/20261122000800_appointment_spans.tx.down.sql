DROP TABLE appointment_spans;
--bun:split
ALTER TABLE records DROP CONSTRAINT records_company_id_id_key;
--bun:split
ALTER TABLE companies DROP COLUMN booking_notice_minutes;
