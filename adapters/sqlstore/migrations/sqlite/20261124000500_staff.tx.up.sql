-- See the PostgreSQL migration.
CREATE TABLE staff_members (
    id         TEXT        PRIMARY KEY,
    company_id TEXT        NOT NULL REFERENCES companies (id),
    email      TEXT        NOT NULL,
    role       TEXT        NOT NULL,
    created_at TEXT        NOT NULL,
    UNIQUE (company_id, id),
    UNIQUE (company_id, email)
);
--bun:split
CREATE TABLE staff_invites (
    company_id TEXT        NOT NULL REFERENCES companies (id),
    token_hash BLOB        NOT NULL,
    email      TEXT        NOT NULL,
    role       TEXT        NOT NULL,
    invited_by TEXT        NOT NULL,
    expires_at TEXT        NOT NULL,
    PRIMARY KEY (company_id, token_hash),
    UNIQUE (company_id, email)
);
--bun:split
CREATE TABLE staff_passkeys (
    id           BLOB        PRIMARY KEY,
    company_id   TEXT        NOT NULL,
    member_id    TEXT        NOT NULL,
    name         TEXT        NOT NULL,
    credential   BLOB        NOT NULL,
    created_at   TEXT        NOT NULL,
    last_used_at TEXT,
    FOREIGN KEY (company_id, member_id) REFERENCES staff_members (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX staff_passkeys_member_idx ON staff_passkeys (company_id, member_id);
