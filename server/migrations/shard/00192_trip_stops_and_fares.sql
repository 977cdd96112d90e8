-- +goose Up
-- A bus trip's stops and fares on its shard (issue 24, decision 0351), beside
-- its seats: the hold's one conditional write resolves the journey's stops,
-- checks its counters and prices its seats from them, with no round trip
-- more. Written once with the show (catalog.CreateShow through
-- booking.Inventory) and never changed, so they need no placement fence.
CREATE TABLE trip_stops (
    show_id  bigint   NOT NULL REFERENCES shows,
    -- The stop's place in route order, from 0; leg i runs from stop i to i+1.
    stop     smallint NOT NULL CHECK (stop >= 0),
    stop_id  text     NOT NULL,
    place    text     NOT NULL,
    place_id text     NOT NULL DEFAULT '',
    -- Minutes from the trip's departure (starts_at) to the coach leaving it.
    minutes  integer  NOT NULL CHECK (minutes >= 0),
    -- The stop's counters as a JSON array of objects; the hold checks a
    -- counter with containment ({"id": …, "boarding": true}).
    counters jsonb    NOT NULL DEFAULT '[]',
    PRIMARY KEY (show_id, stop),
    UNIQUE (show_id, stop_id)
);

-- The price of a seat from one stop to a later one, per seat class ('':
-- every class without a fare of its own). A pair without a row is not sold.
CREATE TABLE fares (
    show_id     bigint   NOT NULL REFERENCES shows,
    from_stop   smallint NOT NULL,
    to_stop     smallint NOT NULL,
    seat_class  text     NOT NULL DEFAULT '',
    price_minor bigint   NOT NULL CHECK (price_minor >= 0 AND price_minor <= 1000000000),
    PRIMARY KEY (show_id, from_stop, to_stop, seat_class),
    CHECK (from_stop >= 0 AND from_stop < to_stop)
);

-- The journey of a hold and of its order: its stops by place in route order
-- (legs from_stop … to_stop-1) and the counters named. A hold of a show
-- without stops is of leg 0: 0 → 1, as every hold before this migration.
ALTER TABLE holds
    ADD COLUMN from_stop smallint NOT NULL DEFAULT 0,
    ADD COLUMN to_stop smallint NOT NULL DEFAULT 1,
    ADD COLUMN boarding_counter text NOT NULL DEFAULT '',
    ADD COLUMN dropping_counter text NOT NULL DEFAULT '';
ALTER TABLE orders
    ADD COLUMN from_stop smallint NOT NULL DEFAULT 0,
    ADD COLUMN to_stop smallint NOT NULL DEFAULT 1,
    ADD COLUMN boarding_counter text NOT NULL DEFAULT '',
    ADD COLUMN dropping_counter text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE orders DROP COLUMN dropping_counter, DROP COLUMN boarding_counter, DROP COLUMN to_stop, DROP COLUMN from_stop;
ALTER TABLE holds DROP COLUMN dropping_counter, DROP COLUMN boarding_counter, DROP COLUMN to_stop, DROP COLUMN from_stop;
DROP TABLE fares;
DROP TABLE trip_stops;
