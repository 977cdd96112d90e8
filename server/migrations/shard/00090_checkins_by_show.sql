-- +goose NO TRANSACTION
-- +goose Up
-- The gate page shows how many tickets of the show are in (R-8.5): a count
-- of the show's check-ins, answered with every scan, reads this index
-- only. Built CONCURRENTLY, so scans go on while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS ticket_checkins_show ON ticket_checkins (show_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS ticket_checkins_show;
