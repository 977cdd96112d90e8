-- +goose NO TRANSACTION
-- +goose Up
-- A partner's hold counts the places it holds or bought of the show under
-- its per-show cap (decision 0286): found by this index, not by scanning
-- the show's holds. Only partners' holds are in it. Built CONCURRENTLY
-- (hence no transaction), so holds keep being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS holds_partner ON holds (show_id, partner_id) WHERE partner_id IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS holds_partner;
