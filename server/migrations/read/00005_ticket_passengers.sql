-- +goose Up
-- A bus ticket names its passenger (issue 24 §5; decision 0381), from the
-- BookingConfirmed event: empty for every other ticket, and for the tickets
-- projected before (a rebuild fills them).
ALTER TABLE my_tickets ADD COLUMN passenger_name  text    NOT NULL DEFAULT '',
                       ADD COLUMN passenger_phone text    NOT NULL DEFAULT '',
                       ADD COLUMN passenger_woman boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE my_tickets DROP COLUMN passenger_name, DROP COLUMN passenger_phone, DROP COLUMN passenger_woman;
