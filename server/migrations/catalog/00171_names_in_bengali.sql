-- +goose Up
-- What a buyer reads in Bengali (decision 0385): an organisation's name,
-- and a show's title, venue and operator as written in Bengali script. ''
-- (every row made before): the Bengali UI shows the name as written.
ALTER TABLE organizations ADD COLUMN name_bn text NOT NULL DEFAULT '';
ALTER TABLE shows
    ADD COLUMN title_bn    text NOT NULL DEFAULT '',
    ADD COLUMN venue_bn    text NOT NULL DEFAULT '',
    ADD COLUMN operator_bn text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE shows DROP COLUMN title_bn, DROP COLUMN venue_bn, DROP COLUMN operator_bn;
ALTER TABLE organizations DROP COLUMN name_bn;
