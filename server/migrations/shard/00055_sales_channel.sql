-- +goose NO TRANSACTION
-- +goose Up
-- The channel a sale came through (issue 12): NULL is Seatghor's own
-- (the web site, the apps, the API with a user's token); a partner id is a
-- reseller's. Recorded on the hold and carried to the order and its
-- payments, so partner statements and the ledger read it from the rows.
-- Nullable without a default: adding it rewrites nothing. The index is
-- built CONCURRENTLY (hence no transaction), so orders keep being written
-- while it builds (docs/operations.md, "Schema changes without downtime").
ALTER TABLE holds ADD COLUMN IF NOT EXISTS partner_id bigint CHECK (partner_id > 0);
ALTER TABLE orders ADD COLUMN IF NOT EXISTS partner_id bigint CHECK (partner_id > 0);
ALTER TABLE payments ADD COLUMN IF NOT EXISTS partner_id bigint CHECK (partner_id > 0);
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_partner ON orders (partner_id, created_at) WHERE partner_id IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS orders_by_partner;
ALTER TABLE payments DROP COLUMN IF EXISTS partner_id;
ALTER TABLE orders DROP COLUMN IF EXISTS partner_id;
ALTER TABLE holds DROP COLUMN IF EXISTS partner_id;
