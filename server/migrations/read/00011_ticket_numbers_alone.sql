-- +goose Up
-- A counter's clerk finds an order by its ticket number without the phone
-- (decision 0476): the number's index no longer needs the phone beside
-- it, nor an order with one.
DROP INDEX my_ticket_orders_number;
CREATE INDEX my_ticket_orders_number ON my_ticket_orders (ticket_number);

-- +goose Down
DROP INDEX my_ticket_orders_number;
CREATE INDEX my_ticket_orders_number ON my_ticket_orders (ticket_number, buyer_phone) WHERE buyer_phone <> '';
