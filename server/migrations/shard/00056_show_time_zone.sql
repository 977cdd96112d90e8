-- +goose Up
-- The shard's copy of a show carries its IANA time zone, so the gate's answer
-- ("already checked in at …") is read in the show's wall clock without asking
-- the catalog (docs/decisions/0170). Shows before it were all in Bangladesh.
ALTER TABLE shows ADD COLUMN time_zone text NOT NULL DEFAULT 'Asia/Dhaka';

-- +goose Down
ALTER TABLE shows DROP COLUMN time_zone;
