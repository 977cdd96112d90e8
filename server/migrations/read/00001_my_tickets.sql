-- +goose Up
-- The read database: "my tickets" (R-8.3), a read model keyed by user and
-- built only from outbox events (projections/mytickets), so it can be dropped
-- and replayed at any time. Every table is hash-partitioned by user_id: one
-- user's reads touch one partition, and partitions can later move to
-- databases of their own (decision 0040).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'seatghor_app') THEN
        CREATE ROLE seatghor_app NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- created by a concurrent migration of another database
END
$$;
-- +goose StatementEnd
GRANT USAGE ON SCHEMA public TO seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO seatghor_app;

-- One row per ticket, written once from BookingConfirmed (or first from
-- OrderCancelled when that arrives first); nothing in it ever changes.
CREATE TABLE my_tickets (
    user_id     text        NOT NULL,
    ticket_id   text        NOT NULL,
    order_id    text        NOT NULL,
    show_id     bigint      NOT NULL,
    seat        text        NOT NULL DEFAULT '',
    ga_area     text        NOT NULL DEFAULT '',
    price_minor bigint      NOT NULL,
    currency    text        NOT NULL,
    code        text        NOT NULL,
    issued_at   timestamptz NOT NULL,
    PRIMARY KEY (user_id, ticket_id)
) PARTITION BY HASH (user_id);
CREATE INDEX my_tickets_newest ON my_tickets (user_id, issued_at DESC, ticket_id);

-- The status of each order as a join-semilattice: the TicketStatus number
-- (1 valid < 3 cancelled < 4 refunded) only grows, set with GREATEST, so
-- duplicates and any arrival order end in the same state (decision 0040).
CREATE TABLE my_ticket_orders (
    user_id   text        NOT NULL,
    order_id  text        NOT NULL,
    show_id   bigint      NOT NULL,
    status    smallint    NOT NULL,
    status_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, order_id)
) PARTITION BY HASH (user_id);

-- Check-ins (TicketCheckedIn); a ticket is admitted at most once.
CREATE TABLE my_ticket_checkins (
    user_id       text        NOT NULL,
    ticket_id     text        NOT NULL,
    gate          text        NOT NULL DEFAULT '',
    checked_in_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, ticket_id)
) PARTITION BY HASH (user_id);

-- E-ticket PDFs stored in object storage, one per order; written by the
-- eticket projector (projections/eticket), which owns this table.
CREATE TABLE my_ticket_pdfs (
    user_id    text        NOT NULL,
    order_id   text        NOT NULL,
    object_key text        NOT NULL,
    stored_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, order_id)
) PARTITION BY HASH (user_id);

-- +goose StatementBegin
DO $$
BEGIN
    FOR t IN 0..7 LOOP
        EXECUTE format('CREATE TABLE my_tickets_p%s PARTITION OF my_tickets FOR VALUES WITH (MODULUS 8, REMAINDER %s)', t, t);
        EXECUTE format('CREATE TABLE my_ticket_orders_p%s PARTITION OF my_ticket_orders FOR VALUES WITH (MODULUS 8, REMAINDER %s)', t, t);
        EXECUTE format('CREATE TABLE my_ticket_checkins_p%s PARTITION OF my_ticket_checkins FOR VALUES WITH (MODULUS 8, REMAINDER %s)', t, t);
        EXECUTE format('CREATE TABLE my_ticket_pdfs_p%s PARTITION OF my_ticket_pdfs FOR VALUES WITH (MODULUS 8, REMAINDER %s)', t, t);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- What a ticket shows about its show (title, route or venue, time), from the
-- catalog's ShowPublished; the newest publication wins.
CREATE TABLE ticket_shows (
    show_id      bigint      PRIMARY KEY,
    kind         smallint    NOT NULL,
    title        text        NOT NULL,
    origin       text        NOT NULL DEFAULT '',
    destination  text        NOT NULL DEFAULT '',
    venue        text        NOT NULL DEFAULT '',
    starts_at    timestamptz NOT NULL,
    published_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE ticket_shows;
DROP TABLE my_ticket_pdfs;
DROP TABLE my_ticket_checkins;
DROP TABLE my_ticket_orders;
DROP TABLE my_tickets;
