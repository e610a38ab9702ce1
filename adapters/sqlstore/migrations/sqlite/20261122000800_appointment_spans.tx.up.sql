-- See the PostgreSQL migration. SQLite has one writer: a booking's check
-- inside its immediate transaction cannot be overtaken, so no constraint
-- stands behind it here.
CREATE UNIQUE INDEX records_company_id_id_key ON records (company_id, id);
--bun:split
CREATE TABLE appointment_spans (
    company_id     TEXT    NOT NULL,
    appointment_id TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    location_id    TEXT    NOT NULL,
    starts_at      INTEGER NOT NULL,
    blocks_until   INTEGER NOT NULL,
    active         BOOLEAN NOT NULL,
    online         BOOLEAN NOT NULL,
    PRIMARY KEY (company_id, appointment_id),
    FOREIGN KEY (company_id, appointment_id) REFERENCES records (company_id, id),
    CHECK (starts_at < blocks_until)
);
--bun:split
CREATE INDEX appointment_spans_calendar_idx ON appointment_spans (company_id, user_id, starts_at) WHERE active;
--bun:split
ALTER TABLE companies ADD COLUMN booking_notice_minutes INTEGER NOT NULL DEFAULT 120 CHECK (booking_notice_minutes BETWEEN 0 AND 10080);
