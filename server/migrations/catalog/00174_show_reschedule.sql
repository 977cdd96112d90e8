-- +goose Up
-- A show its operator moved to a later time (issue 25 §5, decision 0441)
-- keeps the time it was first sold for: its status reads "delayed" and the
-- passengers' messages say what it was.
ALTER TABLE shows
    ADD COLUMN scheduled_starts_at timestamptz,
    ADD COLUMN reschedule_reason text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE shows
    DROP COLUMN scheduled_starts_at,
    DROP COLUMN reschedule_reason;
