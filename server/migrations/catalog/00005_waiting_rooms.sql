-- +goose Up
-- The waiting room of a show (R-9): its window and the operators' settings.
-- The queue itself (places, the admission number) lives in Redis; this row
-- is the durable part, written with the show and changed by UpdateSale.
CREATE TABLE waiting_rooms (
    show_id         bigint      PRIMARY KEY REFERENCES shows (show_id),
    -- the show's on_sale_at: the lottery is drawn then (R-9.2)
    opens_at        timestamptz NOT NULL,
    -- after it CreateHold needs no Queue-Token
    ends_at         timestamptz NOT NULL,
    min_rate        integer     NOT NULL CHECK (min_rate >= 1),
    max_rate        integer     NOT NULL CHECK (max_rate >= min_rate),
    admitted_ttl_ms bigint      NOT NULL CHECK (admitted_ttl_ms > 0),
    paused          boolean     NOT NULL DEFAULT false,
    updated_at      timestamptz NOT NULL,
    updated_by      text        NOT NULL
);
-- The admission controller reads the rooms whose window has not ended.
CREATE INDEX waiting_rooms_ends_at ON waiting_rooms (ends_at);

-- +goose Down
DROP TABLE waiting_rooms;
