-- +goose Up
-- Who travels on each seat of a bus order (issue 24 §5; decisions 0380,
-- 0381): the name as on an identity document, a mobile number in E.164 and
-- the declaration for seats for women. Written with the order, never
-- changed; read by the buyer, the trip's organisation and admins, printed
-- on the tickets and kept for the trip's manifest.
CREATE TABLE order_passengers (
    order_id text    NOT NULL REFERENCES orders,
    show_id  bigint  NOT NULL,
    seat     text    NOT NULL,
    name     text    NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    phone    text    NOT NULL CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
    woman    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (order_id, seat)
);
-- The trip's manifest reads a show's passengers.
CREATE INDEX order_passengers_show ON order_passengers (show_id, seat);

-- The placement fence (decisions 0205, 0265, 0270): no row of a show that
-- is moving to another shard is written.
CREATE TRIGGER order_passengers_show_writable BEFORE INSERT OR UPDATE ON order_passengers
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TABLE order_passengers;
