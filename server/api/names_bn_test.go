package api_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestShowsNamedInBengali (decision 0385): an organisation and a show
// carry their names in Bengali script through the API; a show that names
// no operator takes both of its organisation's names, one that names its
// own operator keeps its own Bengali name (or none); an organisation made
// before its Bengali name was known gets it from the same create.
func TestShowsNamedInBengali(t *testing.T) {
	env := apptest.New(t, apptest.Options{Projectors: true, Tickets: true})
	admin := as(t, env, "admin", auth.RoleAdmin)
	user := as(t, env, "rumana", auth.RoleUser)
	ctx := context.Background()
	org := func(nameBn string) (*catalogv1.Organization, error) {
		resp, err := admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
			OrganizationId: "ena", Name: "Ena Transport", NameBn: nameBn}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetOrganization(), nil
	}
	o, err := org("")
	require.NoError(t, err)
	require.Empty(t, o.GetNameBn())
	o, err = org("এনা ট্রান্সপোর্ট")
	require.NoError(t, err, "an organisation made before gets its Bengali name")
	require.Equal(t, "এনা ট্রান্সপোর্ট", o.GetNameBn())
	o, err = org("")
	require.NoError(t, err, "a create that gives no Bengali name answers the organisation")
	require.Equal(t, "এনা ট্রান্সপোর্ট", o.GetNameBn())
	_, err = org("অন্য নাম")
	require.Equal(t, connect.CodeAlreadyExists, connect.CodeOf(err), "another Bengali name: %v", err)

	bus := seatedShow("Dhaka to Sylhet 07:00", 2, 4)
	bus.Kind, bus.Venue, bus.Origin, bus.Destination, bus.OrganizationId = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, "", "Dhaka", "Sylhet", "ena"
	own := seatedShow("Dhaka to Sylhet 09:00", 2, 4)
	own.Kind, own.Venue, own.Origin, own.Destination, own.OrganizationId, own.Operator =
		catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, "", "Dhaka", "Sylhet", "ena", "Ena Express"
	match := seatedShow("Bangladesh v India, ODI", 2, 10)
	match.Kind, match.Venue = catalogv1.ShowKind_SHOW_KIND_SPORT, "Sher-e-Bangla Stadium, Mirpur"
	match.TitleBn, match.VenueBn, match.OperatorBn = "বাংলাদেশ বনাম ভারত, ওয়ানডে", "শেরেবাংলা স্টেডিয়াম, মিরপুর", "বিসিবি"
	for _, c := range []struct {
		name                        string
		req                         *catalogv1.CreateShowRequest
		operator, operatorBn, title string
		venueBn                     string
	}{
		{"the organisation's names", bus, "Ena Transport", "এনা ট্রান্সপোর্ট", "", ""},
		{"its own operator, no Bengali name", own, "Ena Express", "", "", ""},
		{"a match named in Bengali", match, "admin", "বিসিবি", "বাংলাদেশ বনাম ভারত, ওয়ানডে", "শেরেবাংলা স্টেডিয়াম, মিরপুর"},
	} {
		t.Run(c.name, func(t *testing.T) {
			made := createShow(t, env, c.req)
			got, err := user.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: made.GetShowId()}))
			require.NoError(t, err)
			for _, s := range []*catalogv1.Show{made, got.Msg.GetShow()} {
				require.Equal(t, c.operator, s.GetOperator())
				require.Equal(t, c.operatorBn, s.GetOperatorBn())
				require.Equal(t, c.title, s.GetTitleBn())
				require.Equal(t, c.venueBn, s.GetVenueBn())
			}
		})
	}
	list, err := user.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_SPORT}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetShows(), 1)
	require.Equal(t, "শেরেবাংলা স্টেডিয়াম, মিরপুর", list.Msg.GetShows()[0].GetVenueBn(), "the listing reads it too")

	// "My tickets" names the show in Bengali too, from ShowPublished.
	matchID := list.Msg.GetShows()[0].GetShowId()
	paid(t, newBuyer(t, env, "rumana"), matchID, "A1")
	mine := myTickets(t, ticketsAs(t, env, "rumana", auth.RoleUser), func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 1 && ts[0].GetTitleBn() != ""
	})
	require.Equal(t, "বাংলাদেশ বনাম ভারত, ওয়ানডে", mine[0].GetTitleBn())
	require.Equal(t, "শেরেবাংলা স্টেডিয়াম, মিরপুর", mine[0].GetVenueBn())
	require.Equal(t, "বিসিবি", mine[0].GetOperatorBn())

	long := seatedShow("Too long", 1, 1)
	long.TitleBn = strings.Repeat("ক", 201)
	_, err = admin.catalog.CreateShow(ctx, connect.NewRequest(long))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	require.Equal(t, "title_bn", badField(t, err))
}
