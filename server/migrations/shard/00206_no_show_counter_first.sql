-- +goose Up
-- Until when a no-show's resold legs were the counters' first (decision
-- 0482): when the coach left the next stop by its timetable; NULL when
-- they went on general sale at once (no later stop, the coach gone from
-- it already, or a mark made before this column).
ALTER TABLE ticket_no_shows ADD COLUMN counter_until timestamptz;

-- +goose Down
ALTER TABLE ticket_no_shows DROP COLUMN counter_until;
