-- +goose Up
-- Outgoing webhooks (issue 12, decision 0190): partners' endpoints and the
-- durable queue and log of their deliveries. Both live in the catalog:
-- endpoints belong with the partners, a delivery is claimed together with
-- its endpoint's state (disabled, in flight) in one statement, and the log
-- is not a read model that could be rebuilt (the read database is).

-- partner_id NULL: an admin's endpoint, which receives every partner's
-- events. The secret must be kept as it is (an HMAC key, unlike an API
-- key, cannot be checked against a hash); previous_secret signs too until
-- previous_secret_expires_at, the rotation's overlap.
CREATE TABLE webhook_endpoints (
    endpoint_id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id                 bigint      CHECK (partner_id > 0),
    url                        text        NOT NULL,
    event_types                text[]      NOT NULL,
    description                text        NOT NULL DEFAULT '',
    secret                     text        NOT NULL,
    previous_secret            text,
    previous_secret_expires_at timestamptz,
    status                     text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    disabled_reason            text        NOT NULL DEFAULT '',
    disabled_at                timestamptz,
    consecutive_failures       integer     NOT NULL DEFAULT 0,
    failing_since              timestamptz,
    created_by                 text        NOT NULL,
    created_at                 timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (partner_id, endpoint_id);

-- One row per (endpoint, event): the projector enqueues with ON CONFLICT DO
-- NOTHING, so a batch delivered twice enqueues once. body is the exact
-- JSON signed and sent on every attempt; webhook_id is the webhook-id
-- header, the same on every attempt and replay. A worker claims a due row
-- by setting locked_until (a lease) under FOR UPDATE SKIP LOCKED; a worker
-- that dies leaves the lease to run out and the row is claimed again.
CREATE TABLE webhook_deliveries (
    delivery_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id      bigint      NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
    event_id         text        NOT NULL,
    event_type       text        NOT NULL,
    webhook_id       text        NOT NULL,
    body             text        NOT NULL,
    occurred_at      timestamptz NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    give_up_at       timestamptz NOT NULL,
    locked_until     timestamptz,
    created_at       timestamptz NOT NULL,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, delivery_id DESC);
CREATE INDEX webhook_deliveries_occurred ON webhook_deliveries (endpoint_id, occurred_at);

-- Every attempt, for the delivery log.
CREATE TABLE webhook_attempts (
    delivery_id  bigint      NOT NULL REFERENCES webhook_deliveries ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL,
    status_code  integer     NOT NULL DEFAULT 0,
    error        text        NOT NULL DEFAULT '',
    duration_ms  integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
