-- +goose Up
-- Manual refunds are weighed against what their requester asked for in the
-- last 24 hours (decision 0060), and failed refunds are counted for the
-- alert (R-11): both read through these small partial indexes.
CREATE INDEX refunds_manual_by_requester ON refunds (requested_by, created_at) WHERE reason = 'manual';
CREATE INDEX refunds_failed ON refunds (updated_at) WHERE status = 'failed';

-- +goose Down
DROP INDEX refunds_failed;
DROP INDEX refunds_manual_by_requester;
