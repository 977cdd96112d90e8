-- +goose Up
-- Counter sales (issue 25 §3, decisions 0443 and 0444).
--
-- Counter staff: a role of an organisation that sells its seats for cash.
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('manager', 'gate', 'counter'));

-- A person's cash shift at one of the organisation's counters: opened with
-- the float in the drawer, closed with the cash counted. What it sold and
-- gave back is on the shards of the shows it sold (cash_entries and their
-- ledger journals); the report sums them. One open shift per counter and
-- per person.
CREATE TABLE counter_shifts (
    shift_id            text        PRIMARY KEY,
    organization_id     text        NOT NULL REFERENCES organizations,
    counter_id          text        NOT NULL CHECK (counter_id ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    user_id             text        NOT NULL,
    currency            text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    opening_float_minor bigint      NOT NULL CHECK (opening_float_minor >= 0),
    opened_at           timestamptz NOT NULL,
    closed_at           timestamptz,
    counted_minor       bigint      CHECK (counted_minor >= 0),
    CHECK ((closed_at IS NULL) = (counted_minor IS NULL))
);
CREATE UNIQUE INDEX counter_shifts_open_counter ON counter_shifts (organization_id, counter_id) WHERE closed_at IS NULL;
CREATE UNIQUE INDEX counter_shifts_open_person ON counter_shifts (user_id) WHERE closed_at IS NULL;
CREATE INDEX counter_shifts_organization ON counter_shifts (organization_id, opened_at DESC);

-- The walk-in reserve: seats and minutes before departure that online and
-- partner sales leave to the counters.
ALTER TABLE shows
    ADD COLUMN walk_in_reserve_seats integer NOT NULL DEFAULT 0 CHECK (walk_in_reserve_seats >= 0),
    ADD COLUMN walk_in_reserve_ms    bigint  NOT NULL DEFAULT 0 CHECK (walk_in_reserve_ms >= 0);

-- +goose Down
ALTER TABLE shows DROP COLUMN walk_in_reserve_seats, DROP COLUMN walk_in_reserve_ms;
DROP TABLE counter_shifts;
DELETE FROM memberships WHERE role = 'counter';
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('manager', 'gate'));
