-- +goose Up
-- One shard: everything of the shows placed on it (R-4.1), so a booking step
-- is one local transaction.

-- The booking settings of each show on this shard, copied from the catalog.
CREATE TABLE shows (
    show_id               bigint      PRIMARY KEY,
    operator_id           text        NOT NULL,
    currency              text        NOT NULL,
    on_sale_at            timestamptz NOT NULL,
    starts_at             timestamptz NOT NULL,
    hold_ttl_ms           bigint      NOT NULL CHECK (hold_ttl_ms > 0),
    payment_extension_ms  bigint      NOT NULL CHECK (payment_extension_ms >= 0),
    max_seats_per_account integer     NOT NULL CHECK (max_seats_per_account > 0),
    max_seats_per_hold    integer     NOT NULL CHECK (max_seats_per_hold > 0),
    created_at            timestamptz NOT NULL
);

-- R-3.1: every seat is a row, and every change of it is one conditional write.
-- version grows by one with every change of the seat; the seat map version is
-- their sum, so no per-show counter row becomes a hot row.
CREATE TABLE seats (
    show_id     bigint      NOT NULL REFERENCES shows,
    seat        text        NOT NULL,
    position    integer     NOT NULL,
    section     text        NOT NULL,
    row_label   text        NOT NULL,
    price_minor bigint      NOT NULL CHECK (price_minor >= 0),
    status      text        NOT NULL DEFAULT 'available'
                            CHECK (status IN ('available', 'held', 'booked')),
    hold_id     text,
    held_until  timestamptz,
    version     bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (show_id, seat),
    UNIQUE (show_id, position),
    CHECK ((status = 'available') = (hold_id IS NULL)),
    CHECK (status <> 'held' OR held_until IS NOT NULL)
);
CREATE INDEX seats_by_hold ON seats (hold_id) WHERE hold_id IS NOT NULL;

-- R-3.5: a general-admission area is split into buckets so that no single
-- counter row is the hot row; the CHECK makes overselling impossible.
CREATE TABLE ga_buckets (
    show_id     bigint  NOT NULL REFERENCES shows,
    area        text    NOT NULL,
    bucket      integer NOT NULL,
    position    integer NOT NULL,
    capacity    integer NOT NULL CHECK (capacity >= 0),
    remaining   integer NOT NULL CHECK (remaining >= 0),
    price_minor bigint  NOT NULL CHECK (price_minor >= 0),
    version     bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (show_id, area, bucket),
    CHECK (remaining <= capacity)
);

CREATE TABLE holds (
    hold_id      text        PRIMARY KEY,
    show_id      bigint      NOT NULL REFERENCES shows,
    user_id      text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('active', 'ordered', 'confirmed', 'released', 'expired')),
    seats        text[]      NOT NULL DEFAULT '{}',
    ga_area      text        NOT NULL DEFAULT '',
    quantity     integer     NOT NULL CHECK (quantity > 0),
    amount_minor bigint      NOT NULL CHECK (amount_minor >= 0),
    currency     text        NOT NULL,
    expires_at   timestamptz NOT NULL,
    extended     boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX holds_user ON holds (show_id, user_id);
CREATE INDEX holds_live_expiry ON holds (expires_at) WHERE status IN ('active', 'ordered');

-- What a GA hold took from which bucket, so release and expiry give it back.
CREATE TABLE hold_ga_takes (
    hold_id  text    NOT NULL REFERENCES holds,
    show_id  bigint  NOT NULL,
    area     text    NOT NULL,
    bucket   integer NOT NULL,
    quantity integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (hold_id, bucket)
);

CREATE TABLE orders (
    order_id     text        PRIMARY KEY,
    hold_id      text        NOT NULL UNIQUE REFERENCES holds,
    show_id      bigint      NOT NULL REFERENCES shows,
    user_id      text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending_payment', 'confirmed', 'cancelled', 'expired')),
    amount_minor bigint      NOT NULL CHECK (amount_minor >= 0),
    currency     text        NOT NULL,
    -- the priced lines as ordered (JSON array), immutable
    lines        jsonb       NOT NULL,
    cancel_reason text       NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX orders_user ON orders (user_id, created_at DESC, order_id DESC);

-- Idempotency records (R-5.1), written in the same transaction as the work.
CREATE TABLE idempotency_keys (
    scope       text        NOT NULL,
    key         text        NOT NULL,
    procedure   text        NOT NULL,
    fingerprint bytea       NOT NULL,
    outcome     bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- The transactional outbox (R-8.1): each row carries the writing transaction's
-- id, so a consumer reads only below the oldest running transaction and never
-- skips a row that commits late (DESIGN.md, "The outbox has no gaps").
CREATE TABLE outbox (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
    show_id     bigint      NOT NULL,
    event_id    text        NOT NULL UNIQUE,
    event_type  text        NOT NULL,
    payload     bytea       NOT NULL,
    occurred_at timestamptz NOT NULL
);
CREATE INDEX outbox_xid ON outbox (xid, id);

-- +goose Down
DROP TABLE outbox;
DROP TABLE idempotency_keys;
DROP TABLE orders;
DROP TABLE hold_ga_takes;
DROP TABLE holds;
DROP TABLE ga_buckets;
DROP TABLE seats;
DROP TABLE shows;
