-- +goose NO TRANSACTION
-- +goose Up
-- A seat of a bus trip with stops is sold per leg (issue 24, decision 0350):
-- leg i is the stretch from stop i to stop i+1, and a seat has one row per
-- leg, so one seat may carry several journeys that share no leg. A venue,
-- and a trip without intermediate stops, has leg 0 only: every existing row
-- is leg 0 and keeps its meaning. The leg-0 row carries the layout (section,
-- row, position); the row of leg l has position l * stride + the seat's
-- place (stride: the seats rounded up to a multiple of 4), so a row's
-- position is its place in the seat map's per-leg availability.
--
-- seat_class is the seat's class for the trip's fares (a fare is per stop
-- pair and seat class; '' is the trip's only class).
--
-- Constant defaults: adding the columns rewrites nothing. The key grows to
-- (show_id, seat, leg) through a unique index built CONCURRENTLY here (so
-- holds keep being written while it builds), made the primary key by the
-- next migration. Rerunnable (IF NOT EXISTS).
ALTER TABLE seats ADD COLUMN IF NOT EXISTS leg smallint NOT NULL DEFAULT 0;
ALTER TABLE seats ADD COLUMN IF NOT EXISTS seat_class text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS seats_show_seat_leg ON seats (show_id, seat, leg);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS seats_show_seat_leg;
ALTER TABLE seats DROP COLUMN IF EXISTS seat_class;
ALTER TABLE seats DROP COLUMN IF EXISTS leg;
