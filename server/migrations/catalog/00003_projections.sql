-- +goose Up
-- The read side's bookkeeping in this database (R-8.1): where each projector
-- is in this database's outbox. (No NOTIFY trigger: it would serialise the
-- commits of every outbox writer in the cluster; consumers poll, decision
-- 0020.)

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

-- +goose Down
DROP TABLE projection_checkpoints;
