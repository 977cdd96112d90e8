-- +goose Up
-- The double-entry ledger (R-7), enforced by the database itself, so that no
-- code path (a bug, a hand-written fix, a new service) can break it:
--   R-7.1 every transaction has at least two lines summing to zero: a deferred
--         constraint trigger checks each transaction at COMMIT (one statement
--         cannot see a whole multi-row transaction; a deferred trigger can);
--   R-7.2 append-only: UPDATE, DELETE and TRUNCATE are refused for everyone by
--         a trigger, and the application role is granted only SELECT and
--         INSERT on these tables (below);
--   R-7.4 txn_id is the primary key: a retry never posts twice.
-- Balances are never stored: they are sums of lines (R-7.3), so a hot account
-- such as platform_revenue is never a hot row (R-7.8).

CREATE TABLE ledger_transactions (
    txn_id          text        PRIMARY KEY CHECK (txn_id <> ''),
    kind            text        NOT NULL CHECK (kind IN ('booking', 'gateway_fee', 'refund',
                                    'cancellation_fee', 'payout', 'reversal', 'settlement')),
    -- what it is about: an order, payment, refund or payout id
    reference       text        NOT NULL DEFAULT '',
    -- the show whose shard holds it; 0 for platform-wide entries
    show_id         bigint      NOT NULL DEFAULT 0,
    currency        text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    description     text        NOT NULL DEFAULT '',
    reverses_txn_id text        REFERENCES ledger_transactions,
    created_at      timestamptz NOT NULL,
    CHECK ((kind = 'reversal') = (reverses_txn_id IS NOT NULL))
);
CREATE INDEX ledger_transactions_newest ON ledger_transactions (created_at DESC, txn_id COLLATE "C" DESC);
CREATE INDEX ledger_transactions_reference ON ledger_transactions (reference) WHERE reference <> '';
-- A journal is reversed at most once.
CREATE UNIQUE INDEX ledger_transactions_reversed_once ON ledger_transactions (reverses_txn_id)
    WHERE reverses_txn_id IS NOT NULL;

-- Debit is +, credit is − (R-7.1); integer minor units (R-7.5).
CREATE TABLE ledger_lines (
    txn_id       text        NOT NULL REFERENCES ledger_transactions,
    line         integer     NOT NULL CHECK (line > 0),
    account      text        NOT NULL CHECK (account <> ''),
    amount_minor bigint      NOT NULL CHECK (amount_minor <> 0),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (txn_id, line)
);
CREATE INDEX ledger_lines_account ON ledger_lines (account, created_at);

-- R-7.1 at COMMIT: the transaction has at least two lines, they sum to zero,
-- and they were all written together with the transaction row, by one
-- statement or at least one (sub)transaction (same xmin): lines can never be
-- appended to a journal that is already posted, not even balanced ones.
-- +goose StatementBegin
CREATE FUNCTION ledger_check_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    n       bigint;
    total   numeric;
    writers bigint;
BEGIN
    SELECT count(*), coalesce(sum(l.amount_minor), 0), count(DISTINCT l.xmin::text)
      INTO n, total, writers
      FROM ledger_lines l WHERE l.txn_id = NEW.txn_id;
    IF n < 2 THEN
        RAISE EXCEPTION 'ledger transaction % has % line(s); at least two are required (R-7.1)', NEW.txn_id, n
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balanced';
    END IF;
    IF total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance: its lines sum to % (R-7.1)', NEW.txn_id, total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balanced';
    END IF;
    IF writers <> 1 OR NOT EXISTS (SELECT 1 FROM ledger_transactions t, ledger_lines l
                                    WHERE t.txn_id = NEW.txn_id AND l.txn_id = NEW.txn_id
                                      AND t.xmin::text = l.xmin::text) THEN
        RAISE EXCEPTION 'ledger transaction %: its lines must be written with it, in the same (sub)transaction; a posted journal is never appended to (R-7.2)', NEW.txn_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balanced';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER ledger_transactions_balanced
    AFTER INSERT ON ledger_transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();
CREATE CONSTRAINT TRIGGER ledger_lines_balanced
    AFTER INSERT ON ledger_lines
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

-- R-7.2: append-only for everyone, owner included; a mistake is fixed by a
-- reversing entry.
-- +goose StatementBegin
CREATE FUNCTION ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on % is not allowed; post a reversing entry (R-7.2)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd

CREATE TRIGGER ledger_transactions_append_only
    BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_transactions_no_truncate
    BEFORE TRUNCATE ON ledger_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_lines_append_only
    BEFORE UPDATE OR DELETE ON ledger_lines
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_lines_no_truncate
    BEFORE TRUNCATE ON ledger_lines
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- The application role (R-7.2). Roles belong to the cluster, not to one
-- database, so it is created only when missing; two databases migrated at
-- once may race to create it, hence the exception handler. The application
-- pools switch to it at connect (pg.WithRole); the login role used in
-- production must be a member of it (GRANT seatghor_app TO <login>).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'seatghor_app') THEN
        CREATE ROLE seatghor_app NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- created by a concurrent migration of another database
END
$$;
-- +goose StatementEnd

GRANT USAGE ON SCHEMA public TO seatghor_app;
-- Named one by one (not ALL TABLES), so goose's own version table stays out.
GRANT SELECT, INSERT, UPDATE, DELETE
    ON shows, seats, ga_buckets, holds, hold_ga_takes, orders, idempotency_keys, outbox TO seatghor_app;
GRANT USAGE, SELECT ON SEQUENCE outbox_id_seq TO seatghor_app;
-- The ledger: read and append, nothing else.
GRANT SELECT, INSERT ON ledger_transactions, ledger_lines TO seatghor_app;
-- Tables of later migrations get the ordinary grants automatically. A later
-- append-only table (ledger-like) must say so itself:
--   REVOKE UPDATE, DELETE ON <table> FROM seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO seatghor_app;

-- +goose Down
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE USAGE, SELECT ON SEQUENCES FROM seatghor_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM seatghor_app;
DROP TABLE ledger_lines;
DROP TABLE ledger_transactions;
DROP FUNCTION ledger_refuse_change();
DROP FUNCTION ledger_check_balanced();
REVOKE ALL ON SEQUENCE outbox_id_seq FROM seatghor_app;
REVOKE ALL ON shows, seats, ga_buckets, holds, hold_ga_takes, orders, idempotency_keys, outbox FROM seatghor_app;
REVOKE USAGE ON SCHEMA public FROM seatghor_app;
-- The role stays: it is cluster-wide and other databases may use it.
