-- +goose Up
-- When the coach left its first stop and when it reached its last, as its
-- supervisor marked them (decision 0468); NULL until then. A show's status
-- reads them before the timetable's times.
ALTER TABLE shows ADD COLUMN departed_at timestamptz, ADD COLUMN arrived_at timestamptz;

-- +goose Down
ALTER TABLE shows DROP COLUMN departed_at, DROP COLUMN arrived_at;
