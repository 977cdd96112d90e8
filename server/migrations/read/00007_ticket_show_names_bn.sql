-- +goose Up
-- A ticket's show named in Bengali script too (decision 0385), from
-- ShowPublished; '' (every show published before): the Bengali UI reads the
-- names as written until the show is published again or the view rebuilt.
ALTER TABLE ticket_shows ADD COLUMN title_bn    text NOT NULL DEFAULT '',
                         ADD COLUMN venue_bn    text NOT NULL DEFAULT '',
                         ADD COLUMN operator_bn text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE ticket_shows DROP COLUMN title_bn, DROP COLUMN venue_bn, DROP COLUMN operator_bn;
