-- +goose Up
-- The read side's bookkeeping in this database (R-8.1): where each projector
-- is in this database's outbox, and a wake-up call for the projectors.

-- One row per projector: the last outbox row (xid, id) its read model has
-- accepted. Rows are read in (xid, id) order below the oldest running
-- transaction, so everything at or before the checkpoint is done and nothing
-- after it was skipped (DESIGN.md, "The outbox has no gaps").
CREATE TABLE projection_checkpoints (
    projector  text        PRIMARY KEY,
    xid        xid8        NOT NULL DEFAULT '0',
    id         bigint      NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- NOTIFY is delivered at commit, once per transaction and channel, so a
-- projector waiting in LISTEN wakes as soon as new rows are readable.
-- +goose StatementBegin
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('seatghor_outbox', '');
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

-- +goose Down
DROP TRIGGER outbox_notify ON outbox;
DROP FUNCTION outbox_notify();
DROP TABLE projection_checkpoints;
