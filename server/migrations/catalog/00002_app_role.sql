-- +goose Up
-- The application role (R-7.2, R-10): the API and the workers run as
-- seatghor_app, which may read and write rows but owns nothing, so it cannot
-- change the schema. Roles belong to the cluster, not to one database, so it
-- is created only when missing; databases migrated at once may race to
-- create it, hence the exception handler. The application pools switch to it
-- at connect (pg.WithRole); the login role used in production must be a
-- member of it (GRANT seatghor_app TO <login>).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'seatghor_app') THEN
        CREATE ROLE seatghor_app NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- created by a concurrent migration of another database
END
$$;
-- +goose StatementEnd

GRANT USAGE ON SCHEMA public TO seatghor_app;
-- Named one by one (not ALL TABLES), so goose's own version table stays out.
GRANT SELECT, INSERT, UPDATE, DELETE ON shows, idempotency_keys, outbox TO seatghor_app;
GRANT USAGE, SELECT ON SEQUENCE shows_show_id_seq, outbox_id_seq TO seatghor_app;
-- Tables of later migrations get the ordinary grants automatically. A later
-- append-only table must say so itself:
--   REVOKE UPDATE, DELETE ON <table> FROM seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO seatghor_app;

-- +goose Down
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE USAGE, SELECT ON SEQUENCES FROM seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM seatghor_app;
REVOKE ALL ON SEQUENCE shows_show_id_seq, outbox_id_seq FROM seatghor_app;
REVOKE ALL ON shows, idempotency_keys, outbox FROM seatghor_app;
REVOKE USAGE ON SCHEMA public FROM seatghor_app;
-- The role stays: it is cluster-wide and other databases may use it.
