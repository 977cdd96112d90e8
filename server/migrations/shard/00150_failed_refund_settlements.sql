-- +goose Up
-- A refund the gateway failed is still owed to the buyer: payouts keep its
-- operator share back until an admin records it paid another way (cash at a
-- counter, a bank transfer, an MFS transfer) with a reference (decision 0293).
ALTER TABLE refunds
    ADD COLUMN settled_at       timestamptz,
    ADD COLUMN settled_by       text NOT NULL DEFAULT '',
    ADD COLUMN settle_method    text NOT NULL DEFAULT ''
                                CHECK (settle_method IN ('', 'cash', 'bank_transfer', 'mfs')),
    ADD COLUMN settle_reference text NOT NULL DEFAULT '',
    ADD COLUMN settle_note      text NOT NULL DEFAULT '',
    ADD CONSTRAINT refunds_settled_only_when_failed CHECK (
        settled_at IS NULL
        OR (status = 'failed' AND settled_by <> '' AND settle_method <> '' AND settle_reference <> ''));
-- Payouts and the admins' list read the failed refunds not settled yet.
CREATE INDEX refunds_failed_unsettled ON refunds (show_id, refund_id) WHERE status = 'failed' AND settled_at IS NULL;

-- +goose Down
DROP INDEX refunds_failed_unsettled;
ALTER TABLE refunds
    DROP CONSTRAINT refunds_settled_only_when_failed,
    DROP COLUMN settle_note,
    DROP COLUMN settle_reference,
    DROP COLUMN settle_method,
    DROP COLUMN settled_by,
    DROP COLUMN settled_at;
