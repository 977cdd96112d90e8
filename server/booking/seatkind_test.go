package booking

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

// TestSeatKindNumbers: the kinds the hold statements name in SQL are the
// catalog's (and the API's) numbers.
func TestSeatKindNumbers(t *testing.T) {
	require.Equal(t, strconv.Itoa(int(catalog.KindWomen)), womenKind)
	require.Equal(t, strconv.Itoa(int(catalog.KindBlocked)), blockedKind)
	require.Equal(t, strconv.Itoa(int(catalog.KindWheelchair)), wheelchairKind)
}

// TestWomenSeatsAreAskedFor: a declaration names seats the hold asks for.
func TestWomenSeatsAreAskedFor(t *testing.T) {
	require.NoError(t, checkWomenSeats(HoldRequest{Seats: []string{"A1", "A2"}, WomenSeats: []string{"A2"}}))
	require.NoError(t, checkWomenSeats(HoldRequest{Seats: []string{"A1"}}))
	for _, req := range []HoldRequest{
		{Seats: []string{"A1"}, WomenSeats: []string{"A2"}},
		{GAArea: "Floor", Quantity: 1, WomenSeats: []string{"A1"}},
	} {
		e, ok := fault.As(checkWomenSeats(req))
		require.True(t, ok)
		require.Equal(t, fault.BookingInvalid, e.Reason)
		require.Equal(t, "women_seats", e.Field)
	}
}
