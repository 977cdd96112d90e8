-- +goose Up
-- Allocations (shard migration 00060) are rows of their show, so a show's
-- move copies them and fences their writes like the show's other tables
-- (shard migration 00085, decision 0205).
CREATE TRIGGER allocations_show_writable BEFORE INSERT OR UPDATE OR DELETE ON allocations
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TRIGGER allocations_show_writable ON allocations;
