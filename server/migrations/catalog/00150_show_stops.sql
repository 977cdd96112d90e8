-- +goose Up
-- A bus trip's stops (with their counters) and fares in the catalog, beside
-- its layout (issue 24, decision 0351): GetShow and ListShows answer them,
-- with times in the show's zone. Empty for a venue and for a trip sold whole.
ALTER TABLE shows
    ADD COLUMN stops jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN fares jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE shows DROP COLUMN fares, DROP COLUMN stops;
