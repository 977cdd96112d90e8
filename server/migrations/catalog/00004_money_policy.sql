-- +goose Up
-- Each show's money policy (R-6.9, R-7.5); copied to the show's shard.
ALTER TABLE shows
    ADD COLUMN commission_bps       integer NOT NULL DEFAULT 1000 CHECK (commission_bps BETWEEN 0 AND 10000),
    ADD COLUMN cancellation_fee_bps integer NOT NULL DEFAULT 1000 CHECK (cancellation_fee_bps BETWEEN 0 AND 10000);

-- +goose Down
ALTER TABLE shows DROP COLUMN cancellation_fee_bps, DROP COLUMN commission_bps;
