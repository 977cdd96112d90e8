-- +goose Up
-- The seats' key becomes (show_id, seat, leg) (decision 0350), using the
-- index the previous migration built concurrently: a brief lock, no build.
-- Every leg-0 row keeps its seat unique as before; a leg is never negative.
ALTER TABLE seats DROP CONSTRAINT seats_pkey,
    ADD CONSTRAINT seats_pkey PRIMARY KEY USING INDEX seats_show_seat_leg;
ALTER TABLE seats ADD CONSTRAINT seats_leg_not_negative CHECK (leg >= 0) NOT VALID;

-- +goose Down
ALTER TABLE seats DROP CONSTRAINT seats_leg_not_negative;
ALTER TABLE seats DROP CONSTRAINT seats_pkey;
ALTER TABLE seats ADD CONSTRAINT seats_pkey PRIMARY KEY (show_id, seat);
