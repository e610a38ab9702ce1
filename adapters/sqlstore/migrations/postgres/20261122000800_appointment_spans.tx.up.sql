-- What each appointment blocks of its user's calendar, [starts_at,
-- blocks_until) in Unix seconds (the end plus its service's buffer), kept
-- by the record store beside the appointment's payload. Two online bookings
-- of one user never overlap: the database itself refuses the second, even
-- when two replicas race (bookings also check every active appointment
-- inside their transaction). Practice writes may overbook on purpose.
CREATE EXTENSION IF NOT EXISTS btree_gist;
--bun:split
ALTER TABLE records ADD CONSTRAINT records_company_id_id_key UNIQUE (company_id, id);
--bun:split
CREATE TABLE appointment_spans (
    company_id     uuid    NOT NULL,
    appointment_id uuid    NOT NULL,
    user_id        uuid    NOT NULL,
    location_id    uuid    NOT NULL,
    starts_at      bigint  NOT NULL,
    blocks_until   bigint  NOT NULL,
    active         boolean NOT NULL,
    online         boolean NOT NULL,
    PRIMARY KEY (company_id, appointment_id),
    FOREIGN KEY (company_id, appointment_id) REFERENCES records (company_id, id),
    CHECK (starts_at < blocks_until),
    CONSTRAINT appointment_spans_no_double_booking EXCLUDE USING gist
        (company_id WITH =, user_id WITH =, int8range(starts_at, blocks_until) WITH &&) WHERE (active AND online)
);
--bun:split
CREATE INDEX appointment_spans_calendar_idx ON appointment_spans (company_id, user_id, starts_at) WHERE active;
--bun:split
ALTER TABLE companies ADD COLUMN booking_notice_minutes integer NOT NULL DEFAULT 120 CHECK (booking_notice_minutes BETWEEN 0 AND 10080);
