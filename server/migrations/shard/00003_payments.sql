-- +goose Up
-- Payments (R-6): three truths kept apart (R-6.6). payments is our record of
-- each attempt and what the gateway said about it; payment_events is the
-- immutable log of verified webhook events; orders (and seats) are the
-- business truth. refunds are new financial events, never deletions (R-6.9).

-- The money policy of each show (R-6.9, R-7.5), copied from the catalog.
ALTER TABLE shows
    ADD COLUMN commission_bps       integer NOT NULL DEFAULT 1000 CHECK (commission_bps BETWEEN 0 AND 10000),
    ADD COLUMN cancellation_fee_bps integer NOT NULL DEFAULT 1000 CHECK (cancellation_fee_bps BETWEEN 0 AND 10000);

ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders
    ADD CONSTRAINT orders_status_check
        CHECK (status IN ('pending_payment', 'confirmed', 'cancelled', 'expired', 'refunded')),
    -- the payment that confirmed the order
    ADD COLUMN payment_id             text,
    ADD COLUMN refunded_minor         bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0),
    ADD COLUMN cancellation_fee_minor bigint NOT NULL DEFAULT 0 CHECK (cancellation_fee_minor >= 0);

-- One row per payment attempt, written PENDING before the gateway is called
-- (R-6.1, R-6.2). Every change of status is a conditional UPDATE.
CREATE TABLE payments (
    payment_id        text        PRIMARY KEY,
    order_id          text        NOT NULL REFERENCES orders,
    show_id           bigint      NOT NULL REFERENCES shows,
    user_id           text        NOT NULL,
    attempt           integer     NOT NULL CHECK (attempt > 0),
    method            text        NOT NULL,
    provider          text        NOT NULL,
    -- the single-use token the charge is sent with, kept so that a retry
    -- with the same gateway key sends the same request (never card data,
    -- R-6.11)
    token             text        NOT NULL DEFAULT '',
    return_url        text        NOT NULL DEFAULT '',
    -- R-6.1: stable for the attempt across every retry
    gateway_key       text        NOT NULL UNIQUE,
    status            text        NOT NULL
                      CHECK (status IN ('pending', 'succeeded', 'failed', 'unknown', 'reconciliation_required')),
    amount_minor      bigint      NOT NULL CHECK (amount_minor >= 0),
    currency          text        NOT NULL,
    gateway_charge_id text        NOT NULL DEFAULT '',
    redirect_url      text        NOT NULL DEFAULT '',
    fee_minor         bigint      NOT NULL DEFAULT 0 CHECK (fee_minor >= 0),
    failure_reason    text        NOT NULL DEFAULT '',
    failure_message   text        NOT NULL DEFAULT '',
    refunded_minor    bigint      NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0),
    -- what became of captured money: booked, or refund (the hold was gone)
    outcome           text        NOT NULL DEFAULT '' CHECK (outcome IN ('', 'booked', 'refund')),
    pay_by            timestamptz NOT NULL,
    captured_at       timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    UNIQUE (order_id, attempt)
);
-- At most one attempt per order is in flight: a second charge is never
-- started blind while the first one's outcome is open (R-6.1).
CREATE UNIQUE INDEX payments_one_open_attempt ON payments (order_id) WHERE status IN ('pending', 'unknown');
CREATE INDEX payments_open ON payments (updated_at) WHERE status IN ('pending', 'unknown');
CREATE INDEX payments_captured ON payments (captured_at) WHERE captured_at IS NOT NULL;

-- Verified webhook events, stored as received (R-6.4) and processed later by
-- workers (R-6.5). event_id is the gateway's: a redelivery is a no-op.
CREATE TABLE payment_events (
    event_id     text        PRIMARY KEY,
    provider     text        NOT NULL,
    event_type   text        NOT NULL,
    -- our id the event is about (a payment or a refund)
    reference    text        NOT NULL,
    -- the raw body as signed by the gateway, kept for audit
    raw          bytea       NOT NULL,
    -- the event as the provider adapter understood it
    event        jsonb       NOT NULL,
    occurred_at  timestamptz NOT NULL,
    received_at  timestamptz NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0,
    locked_until timestamptz,
    last_error   text        NOT NULL DEFAULT '',
    processed_at timestamptz,
    result       text        NOT NULL DEFAULT ''
);
CREATE INDEX payment_events_unprocessed ON payment_events (received_at) WHERE processed_at IS NULL;

-- Money given back (R-6.9): recorded before the gateway is called, with its
-- own key. A captured charge is refunded at most once.
CREATE TABLE refunds (
    refund_id          text        PRIMARY KEY,
    payment_id         text        NOT NULL REFERENCES payments,
    order_id           text        NOT NULL REFERENCES orders,
    show_id            bigint      NOT NULL REFERENCES shows,
    user_id            text        NOT NULL,
    reason             text        NOT NULL
                       CHECK (reason IN ('late_payment', 'duplicate_capture', 'cancellation', 'failed_attempt_capture')),
    gateway_charge_id  text        NOT NULL UNIQUE,
    gateway_key        text        NOT NULL UNIQUE,
    amount_minor       bigint      NOT NULL CHECK (amount_minor > 0),
    -- the charge's captured amount; the cancellation fee is captured - amount
    captured_minor     bigint      NOT NULL CHECK (captured_minor >= amount_minor),
    currency           text        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'unknown')),
    gateway_refund_id  text        NOT NULL DEFAULT '',
    last_error         text        NOT NULL DEFAULT '',
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX refunds_open ON refunds (updated_at) WHERE status IN ('pending', 'unknown');

-- +goose Down
DROP TABLE refunds;
DROP TABLE payment_events;
DROP TABLE payments;
ALTER TABLE orders DROP COLUMN cancellation_fee_minor, DROP COLUMN refunded_minor, DROP COLUMN payment_id;
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('pending_payment', 'confirmed', 'cancelled', 'expired'));
ALTER TABLE shows DROP COLUMN cancellation_fee_bps, DROP COLUMN commission_bps;
