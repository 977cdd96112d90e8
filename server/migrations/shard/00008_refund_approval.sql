-- +goose Up
-- Refunds by hand (R-10): few people may ask for one, and a large one needs a
-- second person's approval. The database itself refuses an approval by the
-- person who asked (four eyes), whatever the code does.
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
    CHECK (status IN ('awaiting_approval', 'pending', 'succeeded', 'failed', 'unknown'));
ALTER TABLE refunds DROP CONSTRAINT refunds_reason_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_reason_check
    CHECK (reason IN ('late_payment', 'duplicate_capture', 'cancellation', 'failed_attempt_capture', 'manual'));
-- A booked charge may be refunded more than once (a goodwill refund, then a
-- cancellation), up to what was captured; only the automatic refunds of a
-- capture without a booking stay one per charge, so a redelivered event
-- never refunds twice.
ALTER TABLE refunds DROP CONSTRAINT refunds_gateway_charge_id_key;
CREATE UNIQUE INDEX refunds_one_automatic_per_charge ON refunds (gateway_charge_id)
    WHERE reason IN ('late_payment', 'duplicate_capture', 'failed_attempt_capture');
CREATE INDEX refunds_by_charge ON refunds (gateway_charge_id);
ALTER TABLE refunds
    ADD COLUMN requested_by text NOT NULL DEFAULT '',
    ADD COLUMN approved_by  text NOT NULL DEFAULT '',
    ADD COLUMN note         text NOT NULL DEFAULT '',
    ADD CONSTRAINT refunds_four_eyes CHECK (approved_by = '' OR approved_by <> requested_by);

-- +goose Down
DROP INDEX refunds_by_charge;
DROP INDEX refunds_one_automatic_per_charge;
ALTER TABLE refunds ADD CONSTRAINT refunds_gateway_charge_id_key UNIQUE (gateway_charge_id);
ALTER TABLE refunds DROP CONSTRAINT refunds_four_eyes,
    DROP COLUMN note, DROP COLUMN approved_by, DROP COLUMN requested_by;
ALTER TABLE refunds DROP CONSTRAINT refunds_reason_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_reason_check
    CHECK (reason IN ('late_payment', 'duplicate_capture', 'cancellation', 'failed_attempt_capture'));
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
    CHECK (status IN ('pending', 'succeeded', 'failed', 'unknown'));
