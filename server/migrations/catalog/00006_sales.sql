-- +goose Up
-- A sale of several shows (a tour's dates, a festival's days) has one
-- waiting room and one line (R-9, issue 5). The room is the first show's
-- waiting_rooms row and its id names the sale; every show that sells through
-- a room, the first included, has a row here pointing at it.
CREATE TABLE sale_shows (
    show_id bigint PRIMARY KEY REFERENCES shows (show_id),
    sale_id bigint NOT NULL REFERENCES waiting_rooms (show_id)
);
CREATE INDEX sale_shows_sale_id ON sale_shows (sale_id);
INSERT INTO sale_shows (show_id, sale_id) SELECT show_id, show_id FROM waiting_rooms;

-- +goose Down
DROP TABLE sale_shows;
