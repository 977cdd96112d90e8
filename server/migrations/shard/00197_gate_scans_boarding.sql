-- +goose Up
-- A gate device at a stop of a trip with stops (decision 0408): a scan of a
-- ticket whose journey boards at another stop settles 'boards_elsewhere',
-- naming the stop it boards at, and is not an admission.
ALTER TABLE gate_scans DROP CONSTRAINT gate_scans_outcome_check;
ALTER TABLE gate_scans ADD CONSTRAINT gate_scans_outcome_check
    CHECK (outcome IN ('admitted', 'duplicate', 'refunded', 'invalid', 'boards_elsewhere'));
ALTER TABLE gate_scans ADD COLUMN boarding_stop_id text NOT NULL DEFAULT '';

-- +goose Down
DELETE FROM gate_scans WHERE outcome = 'boards_elsewhere';
ALTER TABLE gate_scans DROP COLUMN boarding_stop_id;
ALTER TABLE gate_scans DROP CONSTRAINT gate_scans_outcome_check;
ALTER TABLE gate_scans ADD CONSTRAINT gate_scans_outcome_check
    CHECK (outcome IN ('admitted', 'duplicate', 'refunded', 'invalid'));
