-- +goose NO TRANSACTION
-- +goose Up
-- A gate device downloads its show's admission list (every ticket of the
-- show's orders, TicketService.GetAdmissionList), paged by order id: this
-- index reads a show's orders in that order without a scan of the shard's
-- orders. Built CONCURRENTLY, so sales go on while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_show ON orders (show_id, order_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS orders_by_show;
