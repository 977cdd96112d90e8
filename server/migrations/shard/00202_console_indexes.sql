-- +goose NO TRANSACTION
-- +goose Up
-- The console (decisions 0448, 0449): its four-eyes queue lists the refunds
-- awaiting a second admin's approval by refund id, few among many refunds;
-- its sales export reads a show's orders a page at a time by order id. Built
-- CONCURRENTLY (hence no transaction), so refunds and orders keep being
-- written while they build (docs/operations.md, "Schema changes without
-- downtime").
CREATE INDEX CONCURRENTLY IF NOT EXISTS refunds_awaiting_approval ON refunds (show_id, refund_id COLLATE "C")
    WHERE status = 'awaiting_approval';
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_show ON orders (show_id, order_id COLLATE "C");

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS orders_show;
DROP INDEX CONCURRENTLY IF EXISTS refunds_awaiting_approval;
