-- +goose Up
-- One run of a timetable at a time, in any process (decision 0361): a run
-- takes the timetable's lease until run_until and gives it back when done;
-- a lease left by a process that died lapses. A lease, not an advisory
-- lock, so a run holds no connection while it makes its trips through
-- other transactions.
ALTER TABLE timetables ADD COLUMN run_until timestamptz;

-- +goose Down
ALTER TABLE timetables DROP COLUMN run_until;
