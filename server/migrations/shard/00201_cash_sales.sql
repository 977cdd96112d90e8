-- +goose Up
-- Counter sales for cash (issue 25 §3, decisions 0443 and 0444).
--
-- The counter shift that sold an order for cash; NULL for every other
-- order. Such an order has no payment: it is refunded at a counter, in
-- cash, and a cancelled trip owes its cash at the counter.
ALTER TABLE orders ADD COLUMN counter_shift_id text;

-- Every movement of cash for an order, each with the ledger journal that
-- records it on the counter's accounts (counter_cash:<org>:<counter>, and
-- counter_owed:<org>:<counter> for cash owed): a sale (+, in the selling
-- shift), a refund at a counter (−), the cash owed when the operator
-- cancelled the trip (no shift: nobody's drawer moved), and its payout (−,
-- in the paying shift). At most one of each kind per order. Written once,
-- never changed.
CREATE TABLE cash_entries (
    txn_id          text        PRIMARY KEY,
    order_id        text        NOT NULL REFERENCES orders,
    show_id         bigint      NOT NULL,
    kind            text        NOT NULL CHECK (kind IN ('sale', 'refund', 'owed', 'payout')),
    shift_id        text,
    organization_id text        NOT NULL,
    counter_id      text        NOT NULL,
    amount_minor    bigint      NOT NULL,
    currency        text        NOT NULL,
    by_user         text        NOT NULL,
    created_at      timestamptz NOT NULL,
    UNIQUE (order_id, kind),
    CHECK ((shift_id IS NULL) = (kind = 'owed'))
);
CREATE INDEX cash_entries_shift ON cash_entries (shift_id, created_at) WHERE shift_id IS NOT NULL;
CREATE INDEX cash_entries_show ON cash_entries (show_id);

-- The placement fence (decisions 0205, 0265, 0270).
CREATE TRIGGER cash_entries_show_writable BEFORE INSERT OR UPDATE ON cash_entries
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');

-- The walk-in reserve, copied from the catalog with the show's rules.
ALTER TABLE shows
    ADD COLUMN walk_in_reserve_seats integer NOT NULL DEFAULT 0 CHECK (walk_in_reserve_seats >= 0),
    ADD COLUMN walk_in_reserve_ms    bigint  NOT NULL DEFAULT 0 CHECK (walk_in_reserve_ms >= 0);

-- +goose Down
ALTER TABLE shows DROP COLUMN walk_in_reserve_seats, DROP COLUMN walk_in_reserve_ms;
DROP TABLE cash_entries;
ALTER TABLE orders DROP COLUMN counter_shift_id;
