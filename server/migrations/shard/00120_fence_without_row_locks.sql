-- +goose Up
-- The placement fence (decision 0205) without a row lock per written row
-- (decision 0265). A writer used to read its show's row FOR SHARE in a
-- trigger on every row it wrote: on an on-sale show, every concurrent hold
-- locked the same row, which PostgreSQL records as a new multixact on that
-- row each time (a write of the row and WAL), and that plus the holds ->
-- shows foreign key's FOR KEY SHARE of the same row cost a hold about half
-- of its database time (pgbench, docs/performance.md).
--
-- Now a writer takes a shared advisory lock named after its show and reads
-- the placement without locking the row; a freeze
-- (server/shardmove) takes the same lock exclusively before it sets
-- 'moving', so it still waits for every write already past the check, and
-- every later write waits for it and then reads the new state: the same
-- ordering the row lock gave, kept in the lock manager's memory. In
-- READ COMMITTED each statement of the function reads a new snapshot, so the
-- read after the lock sees a freeze that committed meanwhile; any other
-- isolation level keeps the row lock, whose conflict is what refuses there.
--
-- Once a transaction has passed the check for a show it holds the lock
-- until it ends, so its later rows of that show need no check:
-- seatghor.fenced (transaction-local, undone with a rolled-back savepoint
-- like the lock itself) names the show, and each trigger's WHEN skips the
-- function when the row is of that show. A hold writes four or five rows;
-- only the first runs the function.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION show_writable() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v     text;
    sid   bigint;
    state text;
BEGIN
    IF current_setting('seatghor.show_mover', true) = 'on' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP = 'DELETE' THEN
        v := to_jsonb(OLD) ->> TG_ARGV[0];
    ELSE
        v := to_jsonb(NEW) ->> TG_ARGV[0];
    END IF;
    IF TG_NARGS > 1 THEN
        v := CASE WHEN v LIKE 'show:%' THEN substr(v, 6) ELSE split_part(v, '_', 2) END;
        IF v !~ '^[1-9][0-9]{0,17}$' THEN
            RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        END IF;
    END IF;
    sid := v::bigint;
    IF current_setting('transaction_isolation') = 'read committed' THEN
        PERFORM pg_advisory_xact_lock_shared(hashtextextended('seatghor.fence', sid));
        SELECT placement INTO state FROM shows WHERE show_id = sid;
    ELSE
        SELECT placement INTO state FROM shows WHERE show_id = sid FOR SHARE;
    END IF;
    IF state IS DISTINCT FROM 'active' AND state IS NOT NULL THEN
        RAISE EXCEPTION 'show % is %', sid, state USING ERRCODE = 'SG001';
    END IF;
    IF state IS NOT NULL THEN
        PERFORM set_config('seatghor.fenced', sid::text, true);
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END;
$$;
-- +goose StatementEnd

DROP TRIGGER seats_show_writable ON seats;
CREATE TRIGGER seats_show_writable BEFORE INSERT OR UPDATE ON seats
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER seats_show_writable_delete BEFORE DELETE ON seats
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ga_buckets_show_writable ON ga_buckets;
CREATE TRIGGER ga_buckets_show_writable BEFORE INSERT OR UPDATE ON ga_buckets
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER ga_buckets_show_writable_delete BEFORE DELETE ON ga_buckets
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER holds_show_writable ON holds;
CREATE TRIGGER holds_show_writable BEFORE INSERT OR UPDATE ON holds
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER holds_show_writable_delete BEFORE DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER hold_ga_takes_show_writable ON hold_ga_takes;
CREATE TRIGGER hold_ga_takes_show_writable BEFORE INSERT OR UPDATE ON hold_ga_takes
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER hold_ga_takes_show_writable_delete BEFORE DELETE ON hold_ga_takes
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER orders_show_writable ON orders;
CREATE TRIGGER orders_show_writable BEFORE INSERT OR UPDATE ON orders
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER orders_show_writable_delete BEFORE DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payments_show_writable ON payments;
CREATE TRIGGER payments_show_writable BEFORE INSERT OR UPDATE ON payments
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER payments_show_writable_delete BEFORE DELETE ON payments
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER refunds_show_writable ON refunds;
CREATE TRIGGER refunds_show_writable BEFORE INSERT OR UPDATE ON refunds
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER refunds_show_writable_delete BEFORE DELETE ON refunds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ticket_checkins_show_writable ON ticket_checkins;
CREATE TRIGGER ticket_checkins_show_writable BEFORE INSERT OR UPDATE ON ticket_checkins
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER ticket_checkins_show_writable_delete BEFORE DELETE ON ticket_checkins
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER allocations_show_writable ON allocations;
CREATE TRIGGER allocations_show_writable BEFORE INSERT OR UPDATE ON allocations
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER allocations_show_writable_delete BEFORE DELETE ON allocations
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER outbox_show_writable ON outbox;
CREATE TRIGGER outbox_show_writable BEFORE INSERT OR UPDATE ON outbox
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ledger_transactions_show_writable ON ledger_transactions;
CREATE TRIGGER ledger_transactions_show_writable BEFORE INSERT ON ledger_transactions
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payment_events_show_writable ON payment_events;
CREATE TRIGGER payment_events_show_writable BEFORE INSERT OR UPDATE ON payment_events
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM
          CASE WHEN NEW.reference LIKE 'show:%' THEN substr(NEW.reference, 6) ELSE split_part(NEW.reference, '_', 2) END)
    EXECUTE FUNCTION show_writable('reference', 'id');
DROP TRIGGER idempotency_keys_show_writable ON idempotency_keys;
CREATE TRIGGER idempotency_keys_show_writable BEFORE INSERT OR UPDATE ON idempotency_keys
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM
          CASE WHEN NEW.target LIKE 'show:%' THEN substr(NEW.target, 6) ELSE split_part(NEW.target, '_', 2) END)
    EXECUTE FUNCTION show_writable('target', 'id');

-- The holds -> shows foreign key locked the show's row FOR KEY SHARE in
-- every hold, the same hot row as above. A hold's show exists: the hold's
-- statement reads its row (booking.holdSeatsSQL, holdGASQL, loadShow), and
-- a shard never deletes a shows row (a moved show's stays as its
-- tombstone, decision 0205).
ALTER TABLE holds DROP CONSTRAINT holds_show_id_fkey;

-- +goose Down
ALTER TABLE holds ADD CONSTRAINT holds_show_id_fkey FOREIGN KEY (show_id) REFERENCES shows(show_id);
DROP TRIGGER seats_show_writable_delete ON seats;
DROP TRIGGER seats_show_writable ON seats;
CREATE TRIGGER seats_show_writable BEFORE INSERT OR UPDATE OR DELETE ON seats
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ga_buckets_show_writable_delete ON ga_buckets;
DROP TRIGGER ga_buckets_show_writable ON ga_buckets;
CREATE TRIGGER ga_buckets_show_writable BEFORE INSERT OR UPDATE OR DELETE ON ga_buckets
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER holds_show_writable_delete ON holds;
DROP TRIGGER holds_show_writable ON holds;
CREATE TRIGGER holds_show_writable BEFORE INSERT OR UPDATE OR DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER hold_ga_takes_show_writable_delete ON hold_ga_takes;
DROP TRIGGER hold_ga_takes_show_writable ON hold_ga_takes;
CREATE TRIGGER hold_ga_takes_show_writable BEFORE INSERT OR UPDATE OR DELETE ON hold_ga_takes
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER orders_show_writable_delete ON orders;
DROP TRIGGER orders_show_writable ON orders;
CREATE TRIGGER orders_show_writable BEFORE INSERT OR UPDATE OR DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payments_show_writable_delete ON payments;
DROP TRIGGER payments_show_writable ON payments;
CREATE TRIGGER payments_show_writable BEFORE INSERT OR UPDATE OR DELETE ON payments
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER refunds_show_writable_delete ON refunds;
DROP TRIGGER refunds_show_writable ON refunds;
CREATE TRIGGER refunds_show_writable BEFORE INSERT OR UPDATE OR DELETE ON refunds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ticket_checkins_show_writable_delete ON ticket_checkins;
DROP TRIGGER ticket_checkins_show_writable ON ticket_checkins;
CREATE TRIGGER ticket_checkins_show_writable BEFORE INSERT OR UPDATE OR DELETE ON ticket_checkins
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER allocations_show_writable_delete ON allocations;
DROP TRIGGER allocations_show_writable ON allocations;
CREATE TRIGGER allocations_show_writable BEFORE INSERT OR UPDATE OR DELETE ON allocations
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER outbox_show_writable ON outbox;
CREATE TRIGGER outbox_show_writable BEFORE INSERT OR UPDATE ON outbox
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ledger_transactions_show_writable ON ledger_transactions;
CREATE TRIGGER ledger_transactions_show_writable BEFORE INSERT ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payment_events_show_writable ON payment_events;
CREATE TRIGGER payment_events_show_writable BEFORE INSERT OR UPDATE ON payment_events
    FOR EACH ROW EXECUTE FUNCTION show_writable('reference', 'id');
DROP TRIGGER idempotency_keys_show_writable ON idempotency_keys;
CREATE TRIGGER idempotency_keys_show_writable BEFORE INSERT OR UPDATE ON idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION show_writable('target', 'id');
-- +goose StatementBegin
-- TG_ARGV[0] names the column that leads to the show: show_id itself, or an
-- id (TG_ARGV[1] = 'id') that carries the show id (server/shard/id.go), or
-- an idempotency target ('show:N' or such an id).
CREATE OR REPLACE FUNCTION show_writable() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v     text;
    sid   bigint;
    state text;
BEGIN
    IF current_setting('seatghor.show_mover', true) = 'on' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP = 'DELETE' THEN
        v := to_jsonb(OLD) ->> TG_ARGV[0];
    ELSE
        v := to_jsonb(NEW) ->> TG_ARGV[0];
    END IF;
    IF TG_NARGS > 1 THEN
        v := CASE WHEN v LIKE 'show:%' THEN substr(v, 6) ELSE split_part(v, '_', 2) END;
        IF v !~ '^[1-9][0-9]{0,17}$' THEN
            RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        END IF;
    END IF;
    sid := v::bigint;
    SELECT placement INTO state FROM shows WHERE show_id = sid FOR SHARE;
    IF state IS DISTINCT FROM 'active' AND state IS NOT NULL THEN
        RAISE EXCEPTION 'show % is %', sid, state USING ERRCODE = 'SG001';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END;
$$;
-- +goose StatementEnd
