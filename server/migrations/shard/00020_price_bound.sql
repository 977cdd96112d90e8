-- +goose Up
-- Prices are bounded (docs/decisions/0071-price-and-total-bounds.md): a seat
-- or a general-admission place costs 0 (free) to 1,000,000,000 minor units
-- (10,000,000 Tk). With at most 100 places in a hold no order total comes
-- near 64 bits. The catalog and the API refuse larger prices; the shard
-- refuses them too, whatever writes its rows.
ALTER TABLE seats ADD CONSTRAINT seats_price_bound CHECK (price_minor <= 1000000000);
ALTER TABLE ga_buckets ADD CONSTRAINT ga_buckets_price_bound CHECK (price_minor <= 1000000000);

-- +goose Down
ALTER TABLE ga_buckets DROP CONSTRAINT ga_buckets_price_bound;
ALTER TABLE seats DROP CONSTRAINT seats_price_bound;
