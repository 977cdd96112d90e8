-- +goose Up
-- Decision 0066: a ticket has one spelling, "tkt_<show>_<16 characters>_<position,
-- at least 3 digits>", the one ticket.ID writes and the signed codes carry.
-- Check-in once stored the id as typed, so "…_0001" or "…_+01" added a second
-- row for a ticket already admitted as "…_001". Of the rows of one ticket the
-- first admission stays; the others are dropped, and the kept row takes the
-- one spelling. The CHECK keeps any other spelling, or a ticket id that does
-- not name the row's order, out of the table from now on.
DELETE FROM ticket_checkins t
USING (SELECT c.ticket_id,
              row_number() OVER (PARTITION BY c.order_id, x.p ORDER BY c.checked_in_at, c.ticket_id) AS n
       FROM ticket_checkins c,
            LATERAL (SELECT substring(c.ticket_id FROM '_([^_]*)$')::numeric AS p) x) r
WHERE t.ticket_id = r.ticket_id AND r.n > 1;

UPDATE ticket_checkins t SET ticket_id = s.canonical
FROM (SELECT c.ticket_id,
             'tkt' || substr(c.order_id, 4) || '_' || lpad(x.p, greatest(3, length(x.p)), '0') AS canonical
      FROM ticket_checkins c,
           LATERAL (SELECT (substring(c.ticket_id FROM '_([^_]*)$')::numeric)::text AS p) x) s
WHERE t.ticket_id = s.ticket_id AND t.ticket_id <> s.canonical;

ALTER TABLE ticket_checkins ADD CONSTRAINT ticket_checkins_canonical_id CHECK (
    ticket_id ~ '^tkt_[1-9][0-9]*_[0-9a-hjkmnp-tv-z]{16}_(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2,})$'
    AND left(ticket_id, length(order_id)) = 'tkt' || substr(order_id, 4)
);

-- +goose Down
ALTER TABLE ticket_checkins DROP CONSTRAINT ticket_checkins_canonical_id;
