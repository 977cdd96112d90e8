package api_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestOrderContact (issue 25 §1, decision 0430): CreateOrder takes an
// optional contact. A bad one is refused invalid_argument naming the field,
// through the Connect handler, and nothing is written (the hold is still
// there to order); a good one is stored cleaned (the phone in E.164, the
// e-mail's domain in lower case, "en" by default) and read back on the
// order by its buyer and admins, nobody else.
func TestOrderContact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("Contact", 1, 4)).GetShowId()
	rumana := newBuyer(t, env, "rumana")
	hold, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)
	holdID := hold.Msg.GetHold().GetHoldId()
	for _, tc := range []struct {
		name    string
		contact *commonv1.Contact
		field   string
	}{
		{"a landline", &commonv1.Contact{Phone: "02-9876543"}, "contact.phone"},
		{"a foreign number", &commonv1.Contact{Phone: "+44 7911 123456"}, "contact.phone"},
		{"an operator prefix not in use", &commonv1.Contact{Phone: "01211-234567"}, "contact.phone"},
		{"no at sign", &commonv1.Contact{Email: "rumana.example.com"}, "contact.email"},
		{"a name with the address", &commonv1.Contact{Email: "Rumana <rumana@example.com>"}, "contact.email"},
		{"a domain without a dot", &commonv1.Contact{Email: "rumana@localhost"}, "contact.email"},
		{"a language not offered", &commonv1.Contact{Phone: "01711234567", Language: "hi"}, "contact.language"},
		{"too long for the wire", &commonv1.Contact{Email: strings.Repeat("a", 250) + "@x.bd"}, "contact.email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: holdID, Contact: tc.contact}))
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
			require.Equal(t, tc.field, badField(t, err), "%v", err)
		})
	}

	created, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: holdID,
		Contact: &commonv1.Contact{Phone: "+88 ০১৭১১-২৩৪৫৬৭", Email: " rumana@Example.COM ", Language: "BN"}}))
	require.NoError(t, err)
	want := &commonv1.Contact{Phone: "+8801711234567", Email: "rumana@example.com", Language: "bn"}
	require.True(t, proto.Equal(want, created.Msg.GetOrder().GetContact()), "%v", created.Msg.GetOrder().GetContact())
	for _, tc := range []struct {
		who  string
		role auth.Role
		sees bool
	}{{"rumana", auth.RoleUser, true}, {"admin", auth.RoleAdmin, true}, {"karim", auth.RoleUser, false}} {
		got, err := as(t, env, tc.who, tc.role).orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{
			OrderId: created.Msg.GetOrder().GetOrderId()}))
		if !tc.sees {
			requireReason(t, err, connect.CodeNotFound, "BOOKING_NOT_FOUND")
			continue
		}
		require.NoError(t, err)
		require.True(t, proto.Equal(want, got.Msg.GetOrder().GetContact()), "%s: %v", tc.who, got.Msg.GetOrder().GetContact())
	}

	// A language alone is kept: the passengers' numbers are told in it.
	hold2, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err)
	plain, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{
		HoldId: hold2.Msg.GetHold().GetHoldId(), Contact: &commonv1.Contact{Language: "bn"}}))
	require.NoError(t, err)
	require.True(t, proto.Equal(&commonv1.Contact{Language: "bn"}, plain.Msg.GetOrder().GetContact()), "%v", plain.Msg.GetOrder().GetContact())
}
