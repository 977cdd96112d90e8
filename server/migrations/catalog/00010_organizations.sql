-- +goose Up
-- Operators are organisations with members, not names (issue 9, 2.1;
-- docs/decisions/0075-organisations-and-roles.md). A show belongs to one
-- organisation; its members act on it by role: a manager creates its shows
-- and runs their sales, gate staff only check tickets in. Tokens carry no
-- organisation: the caller's user id is looked up here.
CREATE TABLE organizations (
    organization_id text        PRIMARY KEY,
    name            text        NOT NULL,
    created_by      text        NOT NULL,
    created_at      timestamptz NOT NULL
);

-- One role per user and organisation; changing it replaces the row.
CREATE TABLE memberships (
    organization_id text        NOT NULL REFERENCES organizations,
    user_id         text        NOT NULL,
    role            text        NOT NULL CHECK (role IN ('manager', 'gate')),
    added_by        text        NOT NULL,
    added_at        timestamptz NOT NULL,
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

-- NULL: a show of the platform's own, which only admins manage.
ALTER TABLE shows ADD COLUMN organization_id text REFERENCES organizations;

-- Shows created before organisations keep the access they had: each
-- creator becomes the manager of an organisation of their own, whose id is
-- derived from the creator's id alone, so the shards' migration (which
-- cannot see this database) names the same organisation.
INSERT INTO organizations (organization_id, name, created_by, created_at)
    SELECT DISTINCT 'legacy-' || md5(created_by), created_by, 'migration', now() FROM shows;
INSERT INTO memberships (organization_id, user_id, role, added_by, added_at)
    SELECT DISTINCT 'legacy-' || md5(created_by), created_by, 'manager', 'migration', now() FROM shows;
UPDATE shows SET organization_id = 'legacy-' || md5(created_by);

-- +goose Down
ALTER TABLE shows DROP COLUMN organization_id;
DROP TABLE memberships;
DROP TABLE organizations;
