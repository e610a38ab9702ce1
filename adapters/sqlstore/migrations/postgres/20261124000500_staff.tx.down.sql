DROP TABLE staff_passkeys;
--bun:split
DROP TABLE staff_invites;
--bun:split
DROP TABLE staff_members;
