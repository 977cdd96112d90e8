-- +goose Up
-- A show may be kept as a draft (decision 0455): published_at is when its
-- managers published it, NULL while it is a draft. Every show before this
-- one was published when it was created.
ALTER TABLE shows ADD COLUMN published_at timestamptz;
UPDATE shows SET published_at = created_at;

-- +goose Down
ALTER TABLE shows DROP COLUMN published_at;
