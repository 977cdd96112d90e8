-- +goose Up
-- A passenger the trip's supervisor marked as not boarding at their stop
-- once the coach left it (issue 25 §4, decision 0442): the record the
-- manifest shows, and how many legs of the seat went back on sale with it.
-- Never refunded automatically; written once, never changed.
CREATE TABLE ticket_no_shows (
    ticket_id     text        PRIMARY KEY,
    show_id       bigint      NOT NULL,
    order_id      text        NOT NULL,
    seat          text        NOT NULL,
    stop_id       text        NOT NULL,
    released_legs integer     NOT NULL CHECK (released_legs >= 0),
    marked_by     text        NOT NULL,
    marked_at     timestamptz NOT NULL
);
CREATE INDEX ticket_no_shows_show ON ticket_no_shows (show_id);

-- The placement fence (decisions 0205, 0265, 0270): no row of a show that
-- is moving to another shard is written.
CREATE TRIGGER ticket_no_shows_show_writable BEFORE INSERT OR UPDATE ON ticket_no_shows
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TABLE ticket_no_shows;
