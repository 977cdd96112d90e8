-- +goose Up
-- A show can move to another shard online (decision 0205). Its row here says
-- whether this shard serves it: 'active'; 'incoming' while a move copies it
-- in; 'moving' while a move freezes its writes; 'moved' once it lives
-- elsewhere (the row stays as a tombstone). Every write of a show-scoped row
-- checks it under FOR SHARE, so the move's UPDATE of the row waits for the
-- writes already running and every later write sees the new state and fails
-- with SQLSTATE SG001 (retryable: SHOW_MOVING). The mover sets
-- seatghor.show_mover to write past the check.
ALTER TABLE shows ADD COLUMN placement text NOT NULL DEFAULT 'active'
    CHECK (placement IN ('active', 'incoming', 'moving', 'moved'));

-- +goose StatementBegin
-- TG_ARGV[0] names the column that leads to the show: show_id itself, or an
-- id (TG_ARGV[1] = 'id') that carries the show id (server/shard/id.go), or
-- an idempotency target ('show:N' or such an id).
CREATE FUNCTION show_writable() RETURNS trigger
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

CREATE TRIGGER seats_show_writable BEFORE INSERT OR UPDATE OR DELETE ON seats
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER ga_buckets_show_writable BEFORE INSERT OR UPDATE OR DELETE ON ga_buckets
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER holds_show_writable BEFORE INSERT OR UPDATE OR DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER hold_ga_takes_show_writable BEFORE INSERT OR UPDATE OR DELETE ON hold_ga_takes
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER orders_show_writable BEFORE INSERT OR UPDATE OR DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER payments_show_writable BEFORE INSERT OR UPDATE OR DELETE ON payments
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER refunds_show_writable BEFORE INSERT OR UPDATE OR DELETE ON refunds
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER ticket_checkins_show_writable BEFORE INSERT OR UPDATE OR DELETE ON ticket_checkins
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
-- The outbox pruner deletes old rows of every show: only new events are checked.
CREATE TRIGGER outbox_show_writable BEFORE INSERT OR UPDATE ON outbox
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER payment_events_show_writable BEFORE INSERT OR UPDATE ON payment_events
    FOR EACH ROW EXECUTE FUNCTION show_writable('reference', 'id');
-- A refusal remembered under an Idempotency-Key writes nothing else.
CREATE TRIGGER idempotency_keys_show_writable BEFORE INSERT OR UPDATE ON idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION show_writable('target', 'id');

-- +goose Down
DROP TRIGGER idempotency_keys_show_writable ON idempotency_keys;
DROP TRIGGER payment_events_show_writable ON payment_events;
DROP TRIGGER outbox_show_writable ON outbox;
DROP TRIGGER ticket_checkins_show_writable ON ticket_checkins;
DROP TRIGGER refunds_show_writable ON refunds;
DROP TRIGGER payments_show_writable ON payments;
DROP TRIGGER orders_show_writable ON orders;
DROP TRIGGER hold_ga_takes_show_writable ON hold_ga_takes;
DROP TRIGGER holds_show_writable ON holds;
DROP TRIGGER ga_buckets_show_writable ON ga_buckets;
DROP TRIGGER seats_show_writable ON seats;
DROP FUNCTION show_writable();
ALTER TABLE shows DROP COLUMN placement;
