-- +goose Up
-- The channel a sale came through (issue 12): NULL is Seatghor's own
-- (the web site, the apps, the API with a user's token); a partner id is a
-- reseller's. Recorded on the hold and carried to the order and its
-- payments, so partner statements and the ledger read it from the rows.
-- Nullable without a default: adding it rewrites nothing.
ALTER TABLE holds ADD COLUMN partner_id bigint CHECK (partner_id > 0);
ALTER TABLE orders ADD COLUMN partner_id bigint CHECK (partner_id > 0);
ALTER TABLE payments ADD COLUMN partner_id bigint CHECK (partner_id > 0);
CREATE INDEX orders_by_partner ON orders (partner_id, created_at) WHERE partner_id IS NOT NULL;

-- +goose Down
DROP INDEX orders_by_partner;
ALTER TABLE payments DROP COLUMN partner_id;
ALTER TABLE orders DROP COLUMN partner_id;
ALTER TABLE holds DROP COLUMN partner_id;
