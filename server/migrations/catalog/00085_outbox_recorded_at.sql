-- +goose Up
-- When an event was written to the outbox: clock_timestamp() of its INSERT,
-- which in the hold is the last statement before COMMIT, so about when the
-- change became true (decision 0245). Projector delay and lag are counted
-- from it; occurred_at stays the service's time of the change. The column
-- is added without a default and the default set after, so existing rows
-- stay NULL (read as occurred_at) and the table is not rewritten.
ALTER TABLE outbox ADD COLUMN recorded_at timestamptz;
ALTER TABLE outbox ALTER COLUMN recorded_at SET DEFAULT clock_timestamp();

-- +goose Down
ALTER TABLE outbox DROP COLUMN recorded_at;
