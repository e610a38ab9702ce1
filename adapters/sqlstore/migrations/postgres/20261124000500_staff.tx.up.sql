-- The practice's own people (docs/contract.md §13): members with a role,
-- their open invitations (only the token's hash) and their passkeys. Every
-- table names its company, and the composite keys keep a passkey with a
-- member of its own company.
CREATE TABLE staff_members (
    id         uuid        PRIMARY KEY,
    company_id uuid        NOT NULL REFERENCES companies (id),
    email      text        NOT NULL,
    role       text        NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (company_id, id),
    UNIQUE (company_id, email)
);
--bun:split
CREATE TABLE staff_invites (
    company_id uuid        NOT NULL REFERENCES companies (id),
    token_hash bytea       NOT NULL,
    email      text        NOT NULL,
    role       text        NOT NULL,
    invited_by text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (company_id, token_hash),
    UNIQUE (company_id, email)
);
--bun:split
CREATE TABLE staff_passkeys (
    id           bytea       PRIMARY KEY,
    company_id   uuid        NOT NULL,
    member_id    uuid        NOT NULL,
    name         text        NOT NULL,
    credential   bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    FOREIGN KEY (company_id, member_id) REFERENCES staff_members (company_id, id) ON DELETE CASCADE
);
--bun:split
CREATE INDEX staff_passkeys_member_idx ON staff_passkeys (company_id, member_id);
