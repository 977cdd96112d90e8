-- +goose Up
-- What a ticket shows about its show, also its operator and the time zone
-- its times are read in (docs/decisions/0170); filled from ShowPublished.
ALTER TABLE ticket_shows ADD COLUMN operator text NOT NULL DEFAULT '',
                         ADD COLUMN time_zone text NOT NULL DEFAULT 'Asia/Dhaka';

-- +goose Down
ALTER TABLE ticket_shows DROP COLUMN operator, DROP COLUMN time_zone;
