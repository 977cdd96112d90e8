-- +goose Up
-- Issue 22 (decisions 0276, 0277): an endpoint records the API key that
-- created it (revoking the key disables it), endpoints made before that
-- record are flagged for their partner to confirm, an endpoint says who
-- disabled it (after failures its events are kept for a while; otherwise
-- none are), and a delivery may be dropped, with the reason.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check,
    ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read_only', 'booking', 'webhooks'));

ALTER TABLE webhook_endpoints
    ADD COLUMN created_by_key     text,
    ADD COLUMN needs_confirmation boolean NOT NULL DEFAULT false,
    ADD COLUMN disabled_by        text    NOT NULL DEFAULT ''
        CHECK (disabled_by IN ('', 'failures', 'partner', 'admin', 'key_revocation')),
    ADD COLUMN disabled_by_key    text;
-- Every partner endpoint existing now was made by some credential of its
-- partner that was not recorded.
UPDATE webhook_endpoints SET needs_confirmation = true WHERE partner_id IS NOT NULL;
-- Endpoints disabled before now were disabled by the worker after failures.
UPDATE webhook_endpoints SET disabled_by = 'failures' WHERE status = 'disabled';
CREATE INDEX webhook_endpoints_created_by_key ON webhook_endpoints (created_by_key) WHERE created_by_key IS NOT NULL;

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check,
    ADD CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped')),
    ADD COLUMN dropped_reason text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN dropped_reason;
DELETE FROM webhook_deliveries WHERE status = 'dropped';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check,
    ADD CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed'));
DROP INDEX webhook_endpoints_created_by_key;
ALTER TABLE webhook_endpoints DROP COLUMN disabled_by_key, DROP COLUMN disabled_by,
    DROP COLUMN needs_confirmation, DROP COLUMN created_by_key;
DELETE FROM api_keys WHERE scope = 'webhooks';
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check,
    ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read_only', 'booking'));
