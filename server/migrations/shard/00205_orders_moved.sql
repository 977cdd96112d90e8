-- +goose Up
-- When an order's show moved to a later time after the order was paid
-- (decision 0477): its buyer may then cancel it for a full refund, no fee.
-- NULL: bought for the time the show has, or never moved.
ALTER TABLE orders ADD COLUMN moved_at timestamptz;

-- +goose Down
ALTER TABLE orders DROP COLUMN moved_at;
