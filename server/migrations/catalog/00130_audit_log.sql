-- +goose Up
-- The platform's audit log (server/audit, decision 0276): who changed what,
-- written in the transaction of the change. Issue 22 records every change
-- of a webhook endpoint and every API key revocation here; the operator
-- console takes it over. actor_kind is user (a signed-in account), admin,
-- api_key (actor_id is the key id) or system (a worker; actor_id names it).
-- Append-only: the application may add rows and read them, never change or
-- remove one.
CREATE TABLE audit_log (
    audit_id   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL,
    actor_kind text        NOT NULL CHECK (actor_kind IN ('user', 'admin', 'api_key', 'system')),
    actor_id   text        NOT NULL,
    action     text        NOT NULL,
    target     text        NOT NULL,
    detail     jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_target ON audit_log (target, audit_id);
CREATE INDEX audit_log_at ON audit_log (at);
REVOKE UPDATE, DELETE ON audit_log FROM seatghor_app;

-- +goose Down
DROP TABLE audit_log;
