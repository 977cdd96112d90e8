-- +goose Up
-- The shard's audit log (issue 26, decision 0452): the staff writes made on
-- a shard (manual refunds asked for and approved, failed refunds settled,
-- cash given back at a counter) recorded in the transaction of the write,
-- as the catalog's audit_log records the catalog's. Each entry is also an
-- AuditRecorded event of the outbox, which the audit projector gathers
-- into the catalog's log, where the console searches them all. The entry's
-- id carries its show, like every id of a shard. Rows are never changed or
-- removed: the application role may only add and read them.
CREATE TABLE audit_log (
    audit_id   text        PRIMARY KEY,
    show_id    bigint      NOT NULL,
    at         timestamptz NOT NULL,
    actor_kind text        NOT NULL CHECK (actor_kind IN ('user', 'admin', 'api_key', 'system')),
    actor_id   text        NOT NULL,
    action     text        NOT NULL,
    target     text        NOT NULL,
    detail     jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_show ON audit_log (show_id, at);
REVOKE UPDATE, DELETE ON audit_log FROM seatghor_app;

-- +goose Down
DROP TABLE audit_log;
