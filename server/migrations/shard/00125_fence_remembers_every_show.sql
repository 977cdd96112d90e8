-- +goose Up
-- The placement fence (decisions 0205, 0265) remembers every show a
-- transaction has passed the check for, not only the last one
-- (decision 0270). A batch of holds writes rows of many shows in turn
-- (3,000 buses: a different show each hold); with one show remembered,
-- every row of another show than the last ran show_writable() again: four
-- calls a hold instead of one a show. seatghor.fenced is now ',12,15,':
-- each trigger's WHEN looks for ',<show>,' in it, and the function adds its
-- show after the check. Transaction-local as before, so a rolled-back
-- savepoint forgets the shows it added along with the lock it took.

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
        PERFORM set_config('seatghor.fenced',
            coalesce(nullif(current_setting('seatghor.fenced', true), ''), ',') || sid || ',', true);
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END;
$$;
-- +goose StatementEnd

DROP TRIGGER seats_show_writable ON seats;
CREATE TRIGGER seats_show_writable BEFORE INSERT OR UPDATE ON seats
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ga_buckets_show_writable ON ga_buckets;
CREATE TRIGGER ga_buckets_show_writable BEFORE INSERT OR UPDATE ON ga_buckets
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER holds_show_writable ON holds;
CREATE TRIGGER holds_show_writable BEFORE INSERT OR UPDATE ON holds
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER hold_ga_takes_show_writable ON hold_ga_takes;
CREATE TRIGGER hold_ga_takes_show_writable BEFORE INSERT OR UPDATE ON hold_ga_takes
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER orders_show_writable ON orders;
CREATE TRIGGER orders_show_writable BEFORE INSERT OR UPDATE ON orders
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payments_show_writable ON payments;
CREATE TRIGGER payments_show_writable BEFORE INSERT OR UPDATE ON payments
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER refunds_show_writable ON refunds;
CREATE TRIGGER refunds_show_writable BEFORE INSERT OR UPDATE ON refunds
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ticket_checkins_show_writable ON ticket_checkins;
CREATE TRIGGER ticket_checkins_show_writable BEFORE INSERT OR UPDATE ON ticket_checkins
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER allocations_show_writable ON allocations;
CREATE TRIGGER allocations_show_writable BEFORE INSERT OR UPDATE ON allocations
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER outbox_show_writable ON outbox;
CREATE TRIGGER outbox_show_writable BEFORE INSERT OR UPDATE ON outbox
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ledger_transactions_show_writable ON ledger_transactions;
CREATE TRIGGER ledger_transactions_show_writable BEFORE INSERT ON ledger_transactions
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payment_events_show_writable ON payment_events;
CREATE TRIGGER payment_events_show_writable BEFORE INSERT OR UPDATE ON payment_events
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || CASE WHEN NEW.reference LIKE 'show:%' THEN substr(NEW.reference, 6) ELSE split_part(NEW.reference, '_', 2) END || ',') = 0)
    EXECUTE FUNCTION show_writable('reference', 'id');
DROP TRIGGER idempotency_keys_show_writable ON idempotency_keys;
CREATE TRIGGER idempotency_keys_show_writable BEFORE INSERT OR UPDATE ON idempotency_keys
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || CASE WHEN NEW.target LIKE 'show:%' THEN substr(NEW.target, 6) ELSE split_part(NEW.target, '_', 2) END || ',') = 0)
    EXECUTE FUNCTION show_writable('target', 'id');

-- +goose Down
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
DROP TRIGGER ga_buckets_show_writable ON ga_buckets;
CREATE TRIGGER ga_buckets_show_writable BEFORE INSERT OR UPDATE ON ga_buckets
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER holds_show_writable ON holds;
CREATE TRIGGER holds_show_writable BEFORE INSERT OR UPDATE ON holds
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER hold_ga_takes_show_writable ON hold_ga_takes;
CREATE TRIGGER hold_ga_takes_show_writable BEFORE INSERT OR UPDATE ON hold_ga_takes
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER orders_show_writable ON orders;
CREATE TRIGGER orders_show_writable BEFORE INSERT OR UPDATE ON orders
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER payments_show_writable ON payments;
CREATE TRIGGER payments_show_writable BEFORE INSERT OR UPDATE ON payments
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER refunds_show_writable ON refunds;
CREATE TRIGGER refunds_show_writable BEFORE INSERT OR UPDATE ON refunds
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER ticket_checkins_show_writable ON ticket_checkins;
CREATE TRIGGER ticket_checkins_show_writable BEFORE INSERT OR UPDATE ON ticket_checkins
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
DROP TRIGGER allocations_show_writable ON allocations;
CREATE TRIGGER allocations_show_writable BEFORE INSERT OR UPDATE ON allocations
    FOR EACH ROW WHEN (current_setting('seatghor.fenced', true) IS DISTINCT FROM NEW.show_id::text)
    EXECUTE FUNCTION show_writable('show_id');
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
