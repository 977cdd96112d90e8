-- +goose Up
-- A partner sells nothing until it is allowed to (issue 22 §7, decision
-- 0284): empty allow lists used to mean every show; now every show is an
-- explicit grant, sells_every_show. Partners registered before keep what
-- they could do: those whose lists were empty are granted every show.
ALTER TABLE partners
    ADD COLUMN sells_every_show boolean NOT NULL DEFAULT false,
    -- places of one show the partner may hold or have bought at once
    -- (decision 0286); NULL: the platform's default
    ADD COLUMN show_hold_cap integer CHECK (show_hold_cap > 0);
UPDATE partners SET sells_every_show = true
WHERE cardinality(allowed_organization_ids) = 0 AND cardinality(allowed_show_ids) = 0;

-- The one definition of what a partner may sell: partner.Service.MaySell
-- keeps holds to it, and webhook.Service.Enqueue sends a show's public
-- news only to the partners it answers true for. NULL for no such partner.
-- +goose StatementBegin
CREATE FUNCTION partner_may_sell(partner bigint, show bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p.sells_every_show
        OR show = ANY (p.allowed_show_ids)
        OR EXISTS (SELECT FROM shows s WHERE s.show_id = show AND s.organization_id = ANY (p.allowed_organization_ids))
    FROM partners p WHERE p.partner_id = partner
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION partner_may_sell(bigint, bigint);
ALTER TABLE partners DROP COLUMN show_hold_cap, DROP COLUMN sells_every_show;
