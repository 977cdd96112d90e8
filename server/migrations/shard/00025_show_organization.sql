-- +goose Up
-- The shard's copy of a show names the organisation that runs it, not the
-- user who created it (issue 9, 2.1; docs/decisions/0075-organisations-and-roles.md):
-- check-in and the operators' reads ask the catalog whether the caller is a
-- member of it. NULL: a show only admins manage. Existing shows get the
-- organisation the catalog's migration made for their creator.
ALTER TABLE shows ADD COLUMN organization_id text;
UPDATE shows SET organization_id = 'legacy-' || md5(operator_id);
ALTER TABLE shows DROP COLUMN operator_id;

-- +goose Down
ALTER TABLE shows ADD COLUMN operator_id text NOT NULL DEFAULT '';
ALTER TABLE shows DROP COLUMN organization_id;
