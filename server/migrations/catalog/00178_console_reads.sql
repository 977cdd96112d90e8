-- +goose Up
-- The audit log names the organisation an entry belongs to (decision
-- 0446), so an organisation's managers read its entries in the console
-- and nobody else's. '' is the platform's own (a partner's endpoint, an
-- organisation's creation is its own). Entries written before are given
-- theirs from what they are about: a show, a route, a timetable's route.
ALTER TABLE audit_log ADD COLUMN organization_id text NOT NULL DEFAULT '';
UPDATE audit_log a SET organization_id = s.organization_id
FROM shows s WHERE a.target = 'show:' || s.show_id AND s.organization_id IS NOT NULL;
UPDATE audit_log a SET organization_id = r.organization_id
FROM routes r WHERE a.target = 'route:' || r.route_id;
UPDATE audit_log a SET organization_id = r.organization_id
FROM routes r WHERE a.target LIKE 'timetable:%' AND a.detail->>'route_id' = r.route_id;
CREATE INDEX audit_log_organization ON audit_log (organization_id, audit_id);
-- The console lists an organisation's shows by start.
CREATE INDEX shows_organization ON shows (organization_id, starts_at, show_id);

-- +goose Down
DROP INDEX shows_organization;
DROP INDEX audit_log_organization;
ALTER TABLE audit_log DROP COLUMN organization_id;
