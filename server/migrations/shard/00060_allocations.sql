-- +goose Up
-- Ring-fenced inventory (issue 12, decision 0185): an operator allocates
-- seats, or a quota of a general-admission area, of a show to a partner's
-- channel until return_at, when what is left goes back to general sale.
CREATE TABLE allocations (
    allocation_id text        PRIMARY KEY,
    show_id       bigint      NOT NULL REFERENCES shows,
    partner_id    bigint      NOT NULL CHECK (partner_id > 0),
    -- '' for seats; the area of a GA quota.
    ga_area       text        NOT NULL DEFAULT '',
    -- May the partner also hold from general sale of this show?
    general_sale  boolean     NOT NULL,
    return_at     timestamptz NOT NULL,
    status        text        NOT NULL CHECK (status IN ('active', 'released', 'returned')),
    created_by    text        NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX allocations_due ON allocations (return_at) WHERE status = 'active';
CREATE INDEX allocations_show ON allocations (show_id, partner_id);

-- A seat or a bucket of an allocation carries it and its partner, so the
-- hold's conditional write tells whose it is without another round trip.
-- Holding does not touch these columns: a seat stays ring-fenced while the
-- partner's buyer holds or owns it.
ALTER TABLE seats ADD COLUMN allocation_id text,
    ADD COLUMN allocated_partner_id bigint,
    ADD CONSTRAINT seats_allocation CHECK ((allocation_id IS NULL) = (allocated_partner_id IS NULL));
CREATE INDEX seats_by_allocation ON seats (allocation_id) WHERE allocation_id IS NOT NULL;

-- A GA quota is a bucket of its own (decision 0006's buckets): its places
-- are taken from the area's public buckets, capacity and all, so the area's
-- capacity never changes; a returned bucket simply becomes public.
ALTER TABLE ga_buckets ADD COLUMN allocation_id text,
    ADD COLUMN allocated_partner_id bigint,
    ADD CONSTRAINT ga_buckets_allocation CHECK ((allocation_id IS NULL) = (allocated_partner_id IS NULL));

-- +goose Down
ALTER TABLE ga_buckets DROP COLUMN allocated_partner_id, DROP COLUMN allocation_id;
DROP INDEX seats_by_allocation;
ALTER TABLE seats DROP COLUMN allocated_partner_id, DROP COLUMN allocation_id;
DROP TABLE allocations;
