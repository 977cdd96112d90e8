-- +goose Up
-- The IANA time zone a show takes place in: every time a buyer or a gate
-- reads is written in it (docs/decisions/0170). Shows before it were all in
-- Bangladesh.
ALTER TABLE shows ADD COLUMN time_zone text NOT NULL DEFAULT 'Asia/Dhaka';

-- +goose Down
ALTER TABLE shows DROP COLUMN time_zone;
