-- +goose Up
-- The entries the audit projector gathers from the shards' audit logs
-- (decision 0452) keep their shard id, unique: a redelivered event, or one
-- of a show moved with its outbox, adds nothing the second time.
ALTER TABLE audit_log ADD COLUMN source_id text;
CREATE UNIQUE INDEX audit_log_source ON audit_log (source_id) WHERE source_id IS NOT NULL;

-- +goose Down
DROP INDEX audit_log_source;
ALTER TABLE audit_log DROP COLUMN source_id;
