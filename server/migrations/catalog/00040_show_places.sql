-- +goose Up
-- A bus trip's origin and destination as the gazetteer's place ids
-- (server/place, docs/decisions/0112), next to the display names; NULL for a
-- place it does not know, which stays free text. Older shows keep NULL until
-- edited: search resolves their display names through the gazetteer anyway.
ALTER TABLE shows ADD COLUMN origin_place_id text, ADD COLUMN destination_place_id text;

-- +goose Down
ALTER TABLE shows DROP COLUMN origin_place_id, DROP COLUMN destination_place_id;
