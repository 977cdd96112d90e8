-- +goose Up
-- Check-in at the gate (R-8.5, TicketService.CheckInTicket): one row per
-- admitted ticket. The primary key is the verdict (R-3.1): the first scan's
-- INSERT … ON CONFLICT DO NOTHING adds the row, every later scan of the same
-- ticket changes nothing and reads when and where it was used. Tickets
-- themselves are not rows: a ticket id names its order and its place in it
-- (server/ticket), so confirming a booking writes nothing more.
CREATE TABLE ticket_checkins (
    ticket_id     text        PRIMARY KEY,
    show_id       bigint      NOT NULL REFERENCES shows,
    order_id      text        NOT NULL REFERENCES orders,
    seat          text        NOT NULL DEFAULT '',
    ga_area       text        NOT NULL DEFAULT '',
    gate          text        NOT NULL DEFAULT '',
    checked_in_by text        NOT NULL,
    checked_in_at timestamptz NOT NULL
);
CREATE INDEX ticket_checkins_order ON ticket_checkins (order_id);

-- +goose Down
DROP TABLE ticket_checkins;
