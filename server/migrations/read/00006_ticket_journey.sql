-- +goose Up
-- A ticket of a bus trip with stops names its journey: the stops, the
-- boarding and dropping counters and their times (issue 24 §2, decision
-- 0384). It is the BookingConfirmed event's common.v1.Journey as it was,
-- proto-encoded: names and times as sold, answered as they are. NULL for
-- every other ticket, and for the tickets projected before (a rebuild fills
-- them).
ALTER TABLE my_tickets ADD COLUMN journey bytea;

-- +goose Down
ALTER TABLE my_tickets DROP COLUMN journey;
