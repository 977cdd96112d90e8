-- +goose Up
-- The bus network (issue 24 §1, §4; decisions 0360-0363): an organisation's
-- routes, the timetables that run them, and the trips each timetable made.
-- A route and a timetable are read and written whole, so their stops and
-- calendars are documents (the API's messages as JSON, like a show's
-- layout); the trips are rows, one per run, whose key makes the job that
-- creates them idempotent.
CREATE TABLE routes (
    route_id        text        PRIMARY KEY,
    organization_id text        NOT NULL REFERENCES organizations,
    -- the route's name and stops (network.v1.Route as protojson, output
    -- fields left out)
    definition      jsonb       NOT NULL,
    version         bigint      NOT NULL DEFAULT 1 CHECK (version > 0),
    created_by      text        NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX routes_by_organization ON routes (organization_id, route_id);

CREATE TABLE timetables (
    timetable_id    text        PRIMARY KEY,
    route_id        text        NOT NULL REFERENCES routes,
    organization_id text        NOT NULL REFERENCES organizations,
    -- days, times, dates, layout, fares, sale rules (network.v1.Timetable
    -- as protojson, output fields left out)
    definition      jsonb       NOT NULL,
    version         bigint      NOT NULL DEFAULT 1 CHECK (version > 0),
    created_by      text        NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX timetables_by_organization ON timetables (organization_id, timetable_id);
CREATE INDEX timetables_by_route ON timetables (route_id, timetable_id);

-- One row per run a timetable made: the key (timetable, local date, local
-- departure) is claimed in the transaction that publishes the show, so a
-- run is made once however often and wherever the job runs (decision
-- 0361). terms fingerprints what the trip was made from, part by part
-- ({"fares": "…", "stops": "…", …}); a trip whose terms differ from the
-- timetable's now is withdrawn, or left alone when it has sales, and then
-- kept_terms remembers the terms it was kept against, so it is reported
-- (logged, counted) once per change, not on every run.
CREATE TABLE timetable_trips (
    timetable_id text        NOT NULL REFERENCES timetables,
    local_date   date        NOT NULL,
    departure    time        NOT NULL,
    show_id      bigint      NOT NULL UNIQUE REFERENCES shows,
    starts_at    timestamptz NOT NULL,
    terms        jsonb       NOT NULL,
    kept_terms   jsonb,
    made_at      timestamptz NOT NULL,
    PRIMARY KEY (timetable_id, local_date, departure)
);
CREATE INDEX timetable_trips_upcoming ON timetable_trips (timetable_id, starts_at);

-- The route a show runs on, when a timetable made it (Show.route_id).
ALTER TABLE shows ADD COLUMN route_id text;

-- +goose Down
ALTER TABLE shows DROP COLUMN route_id;
DROP TABLE timetable_trips;
DROP TABLE timetables;
DROP TABLE routes;
