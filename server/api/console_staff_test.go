package api_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/auth"
)

// TestManagersRunTheirStaff (issue 26 §1 and §8, decision 0446): the
// console's organisation and staff calls. A caller lists the organisations
// they may open (an admin all, a member theirs with their role, a buyer
// none); a manager adds, changes and removes their organisation's staff
// but never their own membership nor another organisation's; every change
// is in the audit log with who made it and the role before and after
// (the same role again is no change and no entry),
// newest first, filtered and paged; a refused change writes nothing there;
// a manager reads only their organisation's entries.
func TestManagersRunTheirStaff(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	mgr := as(t, o.env, "hanif-mgr", auth.RoleOperator)
	gate := as(t, o.env, "hanif-gate", auth.RoleOperator)
	buyer := as(t, o.env, "rumana", auth.RoleUser)

	orgsOf := func(c clients) map[string]catalogv1.OrganizationRole {
		t.Helper()
		resp, err := c.catalog.ListOrganizations(ctx, connect.NewRequest(&catalogv1.ListOrganizationsRequest{}))
		require.NoError(t, err)
		out := map[string]catalogv1.OrganizationRole{}
		for _, a := range resp.Msg.GetOrganizations() {
			out[a.GetOrganization().GetOrganizationId()] = a.GetRole()
		}
		return out
	}
	require.Equal(t, map[string]catalogv1.OrganizationRole{"hanif": catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER}, orgsOf(mgr))
	require.Equal(t, map[string]catalogv1.OrganizationRole{"hanif": catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE}, orgsOf(gate))
	require.Empty(t, orgsOf(buyer))
	require.Equal(t, map[string]catalogv1.OrganizationRole{"hanif": 0, "shyamoli": 0}, orgsOf(o.admin))

	set := func(c clients, org, user string, role catalogv1.OrganizationRole) error {
		_, err := c.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
			OrganizationId: org, UserId: user, Role: role}))
		return err
	}
	remove := func(c clients, org, user string) error {
		_, err := c.catalog.RemoveOrganizationMember(ctx, connect.NewRequest(&catalogv1.RemoveOrganizationMemberRequest{
			OrganizationId: org, UserId: user}))
		return err
	}
	require.NoError(t, set(mgr, "hanif", "karim", catalogv1.OrganizationRole_ORGANIZATION_ROLE_COUNTER))
	require.NoError(t, set(mgr, "hanif", "karim", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE))
	require.NoError(t, set(mgr, "hanif", "karim", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE), "the same role again: no change, no entry")
	for name, err := range map[string]error{
		"own role":              set(mgr, "hanif", "hanif-mgr", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE),
		"own removal":           remove(mgr, "hanif", "hanif-mgr"),
		"another organisation":  set(mgr, "shyamoli", "karim", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE),
		"gate staff adds":       set(gate, "hanif", "friend", catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER),
		"gate staff removes":    remove(gate, "hanif", "karim"),
		"a buyer promotes self": set(buyer, "hanif", "rumana", catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER),
	} {
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}

	members, err := mgr.catalog.ListOrganizationMembers(ctx, connect.NewRequest(&catalogv1.ListOrganizationMembersRequest{OrganizationId: "hanif"}))
	require.NoError(t, err)
	var got []string
	for _, m := range members.Msg.GetMembers() {
		got = append(got, m.GetUserId()+"="+m.GetRole().String())
	}
	require.Equal(t, []string{"hanif-mgr=ORGANIZATION_ROLE_MANAGER", "hanif-gate=ORGANIZATION_ROLE_GATE", "karim=ORGANIZATION_ROLE_GATE"}, got,
		"managers first, then staff by id; the refused changes changed nothing")
	for _, c := range []clients{gate, buyer, as(t, o.env, "shyamoli-gate", auth.RoleOperator)} {
		_, err := c.catalog.ListOrganizationMembers(ctx, connect.NewRequest(&catalogv1.ListOrganizationMembersRequest{OrganizationId: "hanif"}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	}
	require.NoError(t, remove(mgr, "hanif", "karim"))

	// The audit log: newest first, with before and after.
	read := func(c clients, req *catalogv1.ListAuditEntriesRequest) ([]*catalogv1.AuditEntry, string, error) {
		resp, err := c.catalog.ListAuditEntries(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, "", err
		}
		return resp.Msg.GetEntries(), resp.Msg.GetNextPageToken(), nil
	}
	karim, _, err := read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif", Target: "member:hanif:karim"})
	require.NoError(t, err)
	require.Len(t, karim, 3)
	for i, want := range []struct{ action, before, after string }{
		{"member.remove", "gate", ""}, {"member.set", "counter", "gate"}, {"member.set", "", "counter"},
	} {
		e := karim[i]
		require.Equal(t, want.action, e.GetAction())
		require.Equal(t, "user", e.GetActorKind())
		require.Equal(t, "hanif-mgr", e.GetActorId())
		require.Equal(t, "hanif", e.GetOrganizationId())
		d := e.GetDetail().AsMap()
		role := func(k string) string {
			m, _ := d[k].(map[string]any)
			r, _ := m["role"].(string)
			return r
		}
		require.Equal(t, want.before, role("before"), "entry %d", i)
		require.Equal(t, want.after, role("after"), "entry %d", i)
	}
	removed, _, err := read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif", Action: "member.remove"})
	require.NoError(t, err)
	require.Len(t, removed, 1)
	byMgr, _, err := read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif", ActorId: "hanif-mgr", Action: "member."})
	require.NoError(t, err)
	require.Len(t, byMgr, 3, "the refused changes wrote nothing")
	all, _, err := read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif"})
	require.NoError(t, err)
	require.Equal(t, "organization.create", all[len(all)-1].GetAction(), "the organisation's first entry is its creation")
	require.Equal(t, "admin", all[len(all)-1].GetActorKind())

	// A page at a time: the pages are the whole, in order, once.
	var paged []int64
	token := ""
	for {
		page, next, err := read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif", PageSize: 2, PageToken: token})
		require.NoError(t, err)
		for _, e := range page {
			paged = append(paged, e.GetAuditId())
		}
		if next == "" {
			break
		}
		token = next
	}
	var whole []int64
	for _, e := range all {
		whole = append(whole, e.GetAuditId())
	}
	require.Equal(t, whole, paged)
	_, _, err = read(mgr, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif", PageToken: "x"})
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)

	// Who reads what.
	for name, req := range map[string]*catalogv1.ListAuditEntriesRequest{
		"the whole log":        {},
		"another organisation": {OrganizationId: "shyamoli"},
	} {
		_, _, err := read(mgr, req)
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}
	_, _, err = read(gate, &catalogv1.ListAuditEntriesRequest{OrganizationId: "hanif"})
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	everything, _, err := read(o.admin, &catalogv1.ListAuditEntriesRequest{Action: "organization.create"})
	require.NoError(t, err)
	require.Len(t, everything, 2, "an admin reads every organisation's entries")
}
