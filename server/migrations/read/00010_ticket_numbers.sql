-- +goose Up
-- An order found by its ticket number (decision 0471): the first ten
-- characters of the random part of its id, which the SMS and the receipts
-- print in upper case. Derived, so every row has it and a rebuild needs
-- nothing new; not unique (50 bits), so FindOrder asks for the phone too.
ALTER TABLE my_ticket_orders
    ADD COLUMN ticket_number text GENERATED ALWAYS AS (left(split_part(order_id, '_', 3), 10)) STORED;
CREATE INDEX my_ticket_orders_number ON my_ticket_orders (ticket_number, buyer_phone) WHERE buyer_phone <> '';

-- +goose Down
DROP INDEX my_ticket_orders_number;
ALTER TABLE my_ticket_orders DROP COLUMN ticket_number;
