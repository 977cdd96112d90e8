-- +goose Up
-- A coach's progress as its supervisor marks it (issue 25 §5, decision
-- 0468): a row for each stop the coach has left (stop, as trip_stops
-- numbers them; 0 for a trip without stops), and one for its last stop
-- (max(1, last) without stops) once it has arrived there. A journey boarding
-- at or before a stop left sells no more, whatever the timetable says;
-- its no-shows may be marked. Written once, never changed.
CREATE TABLE trip_marks (
    show_id   bigint      NOT NULL,
    stop      integer     NOT NULL CHECK (stop >= 0),
    marked_at timestamptz NOT NULL,
    marked_by text        NOT NULL,
    PRIMARY KEY (show_id, stop)
);

-- The placement fence (decisions 0205, 0265, 0270).
CREATE TRIGGER trip_marks_show_writable BEFORE INSERT OR UPDATE ON trip_marks
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TABLE trip_marks;
