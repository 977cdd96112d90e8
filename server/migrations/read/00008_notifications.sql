-- +goose Up
-- The notifications projector (issue 25 §1; decisions 0432, 0433). It keeps
-- what it needs from the events themselves, never another service's
-- database: each order's contact and first passenger's number (from
-- OrderCreated and BookingConfirmed) and each show's names and time (from
-- ShowPublished).
CREATE TABLE notify_orders (
    order_id        text PRIMARY KEY,
    show_id         bigint NOT NULL,
    phone           text NOT NULL DEFAULT '',
    email           text NOT NULL DEFAULT '',
    lang            text NOT NULL DEFAULT 'en',
    passenger_phone text NOT NULL DEFAULT '',
    updated_at      timestamptz NOT NULL
);

CREATE TABLE notify_shows (
    show_id      bigint PRIMARY KEY,
    title        text NOT NULL,
    title_bn     text NOT NULL DEFAULT '',
    time_zone    text NOT NULL DEFAULT 'Asia/Dhaka',
    starts_at    timestamptz NOT NULL,
    published_at timestamptz NOT NULL
);

-- One row per message: (event, channel, recipient) is sent at least once
-- and never twice (decision 0433). The row is claimed (committed) before
-- the provider is called and marked sent after; a row left claimed by a
-- crash is sent again on the replay: the at-least-once case. A rebuild
-- keeps these rows, so it never tells anyone twice.
CREATE TABLE notifications (
    event_id    text NOT NULL,
    channel     text NOT NULL CHECK (channel IN ('sms', 'email')),
    recipient   text NOT NULL,
    kind        text NOT NULL,
    order_id    text NOT NULL,
    status      text NOT NULL CHECK (status IN ('claimed', 'sent', 'rejected')),
    attempts    int NOT NULL DEFAULT 1,
    provider_id text NOT NULL DEFAULT '',
    error       text NOT NULL DEFAULT '',
    claimed_at  timestamptz NOT NULL,
    sent_at     timestamptz,
    PRIMARY KEY (event_id, channel, recipient)
);
CREATE INDEX notifications_order ON notifications (order_id);

-- +goose Down
DROP TABLE notifications;
DROP TABLE notify_shows;
DROP TABLE notify_orders;
