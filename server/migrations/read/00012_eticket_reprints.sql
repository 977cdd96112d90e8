-- +goose Up
-- The shows whose e-tickets are being made again after a move or a rename
-- (decision 0484): a job takes a page of orders at a time after
-- after_order, so a stadium's thousands of PDFs do not hold up the
-- projector's batch and new bookings' PDFs. A new request for the show
-- starts it over (requested_at changes).
CREATE TABLE eticket_reprints (
    show_id      bigint      PRIMARY KEY,
    after_order  text        NOT NULL DEFAULT '',
    requested_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE eticket_reprints;
