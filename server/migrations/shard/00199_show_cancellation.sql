-- +goose Up
-- An operator cancels a show (issue 25 §5, decision 0440). The show's copy
-- of its rules on its shard says so: the hold rules refuse it from the
-- moment this commits, and the cancellation job (server/payment) works
-- through its orders until none is left and then sets
-- cancellation_done_at; a job interrupted by a crash finds the show again
-- by cancelled_at and goes on.
ALTER TABLE shows
    ADD COLUMN cancelled_at timestamptz,
    ADD COLUMN cancelled_by text NOT NULL DEFAULT '',
    ADD COLUMN cancel_reason text NOT NULL DEFAULT '',
    ADD COLUMN cancellation_done_at timestamptz;
CREATE INDEX shows_cancelling ON shows (show_id) WHERE cancelled_at IS NOT NULL AND cancellation_done_at IS NULL;
-- Its buyers are refunded in full: a booked refund like a cancellation's,
-- with no fee kept.
ALTER TABLE refunds DROP CONSTRAINT refunds_reason_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_reason_check
    CHECK (reason IN ('late_payment', 'duplicate_capture', 'cancellation', 'failed_attempt_capture', 'manual',
                      'show_cancelled'));

-- +goose Down
ALTER TABLE refunds DROP CONSTRAINT refunds_reason_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_reason_check
    CHECK (reason IN ('late_payment', 'duplicate_capture', 'cancellation', 'failed_attempt_capture', 'manual'))
    NOT VALID;
DROP INDEX shows_cancelling;
ALTER TABLE shows
    DROP COLUMN cancelled_at,
    DROP COLUMN cancelled_by,
    DROP COLUMN cancel_reason,
    DROP COLUMN cancellation_done_at;
