-- +goose Up
-- A show an operator cancelled (issue 25 §5, decision 0440) stays in the
-- catalog, saying so: its buyers' tickets and refunds point at it.
ALTER TABLE shows
    ADD COLUMN cancelled_at timestamptz,
    ADD COLUMN cancelled_by text NOT NULL DEFAULT '',
    ADD COLUMN cancel_reason text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE shows
    DROP COLUMN cancelled_at,
    DROP COLUMN cancelled_by,
    DROP COLUMN cancel_reason;
