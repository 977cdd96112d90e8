-- +goose Up
-- A claim looks at each active endpoint's own due deliveries (so one
-- endpoint's backlog never hides another's, decision 0190) and counts its
-- leased ones: one small index each.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, locked_until)
    WHERE status = 'pending' AND locked_until IS NOT NULL;

-- +goose Down
DROP INDEX webhook_deliveries_leased;
DROP INDEX webhook_deliveries_endpoint_due;
