-- +goose Up
-- The seat-map version of a show is the transaction id of the newest outbox
-- event of the show (decision 0130): the last (xid) of the events the
-- seat-map projector has applied, and the same number a conflict answer
-- reads here (R-5.2). This index makes that a lookup instead of a sum over
-- the show's seat rows.
CREATE INDEX outbox_show_xid ON outbox (show_id, xid);

-- +goose Down
DROP INDEX outbox_show_xid;
