-- +goose Up
-- A show's journals move with it (R-4.1, decision 0205). The append-only rule
-- (R-7.2) gets one exception: the show mover, as the login role (the
-- application role still may not delete), removes the journals of a show
-- that has moved away from this shard, once they are on the new one. And a
-- journal of a show (a payout posts nothing else) is fenced like every
-- other write of the show during a move.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    sid bigint;
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('seatghor.show_mover', true) = 'on' THEN
        IF TG_TABLE_NAME = 'ledger_lines' THEN
            SELECT show_id INTO sid FROM ledger_transactions WHERE txn_id = OLD.txn_id;
        ELSE
            sid := OLD.show_id;
        END IF;
        IF sid <> 0 AND EXISTS (SELECT FROM shows WHERE show_id = sid AND placement = 'moved') THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION 'the ledger is append-only: % on % is not allowed; post a reversing entry (R-7.2)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd

CREATE TRIGGER ledger_transactions_show_writable BEFORE INSERT ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TRIGGER ledger_transactions_show_writable ON ledger_transactions;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on % is not allowed; post a reversing entry (R-7.2)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
