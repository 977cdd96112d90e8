package idempotency_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
)

// TestFaults (decision 0318): a domain's answer made for the request is
// recorded as it is, wrapping stripped, and replayed as a *fault.Error;
// sentinels, other reasons and infrastructure errors are not recorded; what
// the domain recorded before, its own error type by kind, still replays.
func TestFaults(t *testing.T) {
	c := idempotency.Faults("test", []fault.Reason{fault.SeatsUnavailable, fault.BookingInvalid},
		map[string]fault.Reason{"unavailable": fault.SeatsUnavailable})
	taken := &fault.Error{Reason: fault.SeatsUnavailable, Message: "A2 is taken", Seats: []string{"A2"}, SeatmapVersion: 7}
	raw, ok := c.EncodeError(fmt.Errorf("hold: %w", taken))
	require.True(t, ok)
	require.JSONEq(t, `{"reason":"SEATS_UNAVAILABLE","message":"A2 is taken","seats":["A2"],"seatmap_version":7}`,
		string(raw), "the error as it is, wrapping stripped")
	var got *fault.Error
	require.ErrorAs(t, c.DecodeError(raw), &got)
	require.Equal(t, taken, got)

	for name, err := range map[string]error{
		"an infrastructure error":  errors.New("connection reset"),
		"a sentinel":               fmt.Errorf("show 3: %w", fault.Sentinel(fault.SeatsUnavailable, "shared")),
		"a reason of another kind": fault.New(fault.ShowMoving, "moving"),
	} {
		_, ok = c.EncodeError(err)
		require.False(t, ok, "%s is not recorded: a retry does the work", name)
	}

	require.ErrorAs(t, c.DecodeError([]byte(`{"kind":"unavailable","message":"A2 is taken","seats":["A2"]}`)), &got,
		"recorded before decision 0318")
	require.Equal(t, &fault.Error{Reason: fault.SeatsUnavailable, Message: "A2 is taken", Seats: []string{"A2"}}, got)
	require.Error(t, c.DecodeError([]byte(`{"kind":"gone","message":"?"}`)), "an unknown kind")
	require.Error(t, c.DecodeError([]byte("{")))
}

func TestUnion(t *testing.T) {
	c := idempotency.Union(map[string]idempotency.Codec{
		"booking": idempotency.Faults("booking", []fault.Reason{fault.SeatsUnavailable}, nil),
		"payment": idempotency.Faults("payment", []fault.Reason{fault.PaymentNotAllowed}, nil),
	})
	for _, err := range []error{fault.New(fault.SeatsUnavailable, "m"), fault.New(fault.PaymentNotAllowed, "r")} {
		raw, ok := c.EncodeError(err)
		require.True(t, ok)
		require.Equal(t, err, c.DecodeError(raw))
	}
	raw, _ := c.EncodeError(fault.New(fault.PaymentNotAllowed, "r"))
	require.JSONEq(t, `{"payment":{"reason":"PAYMENT_NOT_ALLOWED","message":"r"}}`, string(raw), "tagged by domain")
	_, ok := c.EncodeError(errors.New("timeout"))
	require.False(t, ok)
	require.Error(t, c.DecodeError([]byte(`{"ledger":{}}`)))
}
