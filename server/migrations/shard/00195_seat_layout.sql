-- +goose Up
-- The layout model on the shard (issue 24; decisions 0370, 0371).
--
-- Each seat's place in the drawing: x, y (its centre in layout units, a
-- place being 10 wide; NULL for seats of shows made before, drawn in
-- straight rows), its deck, its kind (catalog.v1.SeatKind: 0 ordinary,
-- 1 business, 2 sleeper berth, 3 for women, 4 wheelchair, 5 crew or
-- blocked); every leg's row of a seat carries them (00190 added the
-- seat_class that bus fares are set for).
-- A hold takes a blocked seat never, a seat for women only for a passenger
-- declared a woman (booking's holdableKind, in every hold statement).
ALTER TABLE seats
    ADD COLUMN x          integer,
    ADD COLUMN y          integer,
    ADD COLUMN deck       smallint NOT NULL DEFAULT 0,
    ADD COLUMN kind       smallint NOT NULL DEFAULT 0;
-- NOT VALID: the rows before have kind 0; new rows are checked.
ALTER TABLE seats ADD CONSTRAINT seats_kind CHECK (kind BETWEEN 0 AND 5) NOT VALID;

-- What the shard's copy of a show draws besides its seats: its decks, its
-- features (driver, doors, stairs, stage) and its sections' Bengali names
-- and seat classes, as JSON (catalog's Drawing); NULL for shows before.
ALTER TABLE shows ADD COLUMN drawing jsonb;

-- The seats of a hold whose passenger was declared a woman (CreateHold
-- women_seats), in layout order: the seats for women among them could be
-- held only so, and the order's passengers must match.
ALTER TABLE holds ADD COLUMN women_seats text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE holds DROP COLUMN women_seats;
ALTER TABLE shows DROP COLUMN drawing;
ALTER TABLE seats DROP CONSTRAINT seats_kind;
ALTER TABLE seats
    DROP COLUMN kind,
    DROP COLUMN deck,
    DROP COLUMN y,
    DROP COLUMN x;
