-- +goose Up
-- Tickets found by the number they were sent to (issue 25 §2, decision
-- 0437): a guest's order by ticket number and phone, and under "my
-- tickets" of whoever signs in with that phone.
--
-- The number an order's tickets went to by SMS (its contact phone, else
-- its first passenger's), from BookingConfirmed; '' for an order without
-- one and for the orders projected before (a rebuild fills them).
ALTER TABLE my_ticket_orders ADD COLUMN buyer_phone text NOT NULL DEFAULT '';
CREATE INDEX my_ticket_orders_phone ON my_ticket_orders (buyer_phone) WHERE buyer_phone <> '';
-- An order's tickets, and a ticket, whoever bought them.
CREATE INDEX my_tickets_order ON my_tickets (order_id);
CREATE INDEX my_tickets_ticket ON my_tickets (ticket_id);

-- Lookups that found nothing, by client address: the per-address limit of
-- FindTickets (kept a day; not a projection, so a rebuild keeps it).
CREATE TABLE ticket_lookup_misses (
    client    text        NOT NULL,
    missed_at timestamptz NOT NULL
);
CREATE INDEX ticket_lookup_misses_client ON ticket_lookup_misses (client, missed_at);

-- What the booking's SMS said, kept to send it again on request: the
-- seats or places and the journey of the confirmed order (the
-- BookingConfirmed event's), and when it was confirmed (NULL: not yet).
ALTER TABLE notify_orders ADD COLUMN seats        text[]  NOT NULL DEFAULT '{}',
                          ADD COLUMN quantity     integer NOT NULL DEFAULT 0,
                          ADD COLUMN journey      bytea,
                          ADD COLUMN confirmed_at timestamptz;

-- +goose Down
ALTER TABLE notify_orders DROP COLUMN seats, DROP COLUMN quantity, DROP COLUMN journey, DROP COLUMN confirmed_at;
DROP TABLE ticket_lookup_misses;
DROP INDEX my_tickets_ticket;
DROP INDEX my_tickets_order;
DROP INDEX my_ticket_orders_phone;
ALTER TABLE my_ticket_orders DROP COLUMN buyer_phone;
