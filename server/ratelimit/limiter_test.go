package ratelimit_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/ratelimit"
)

// TestLimiterCountsActionsPerCaller: the limiter as the edge calls it, with
// no API around it. A caller's holds of one show stop at the sale cap and
// all its holds at its own limit, with the limit named and how long to
// wait; callers, actions and partners count apart; a call without a
// caller is not counted.
func TestLimiterCountsActionsPerCaller(t *testing.T) {
	r := redistest.New(t)
	l := ratelimit.New(r.Client, r.Prefix, ratelimit.Config{
		Holds:        ratelimit.Limit{Rate: 3, Per: time.Hour, Burst: 3},
		SaleHolds:    ratelimit.Limit{Rate: 2, Per: time.Hour, Burst: 2},
		PartnerHolds: ratelimit.Limit{Rate: 4, Per: time.Hour, Burst: 4},
		Payments:     ratelimit.Limit{Rate: 1, Per: time.Hour, Burst: 1},
	}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	as := func(p auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }
	refused := func(t *testing.T, err error, limit string) {
		t.Helper()
		var ex *ratelimit.ExceededError
		require.True(t, errors.As(err, &ex), "%v", err)
		require.Equal(t, limit, ex.Limit)
		require.Positive(t, ex.Wait)
	}

	rumana := as(auth.Principal{UserID: "rumana", Role: auth.RoleUser})
	require.NoError(t, l.Allow(rumana, ratelimit.Hold, 1))
	require.NoError(t, l.Allow(rumana, ratelimit.Hold, 1))
	refused(t, l.Allow(rumana, ratelimit.Hold, 1), "sale-holds")
	require.NoError(t, l.Allow(rumana, ratelimit.Pay, 1), "payments count apart from holds")
	refused(t, l.Allow(rumana, ratelimit.Pay, 1), "payments")
	require.NoError(t, l.Allow(rumana, ratelimit.Join, 1), "joins are not limited here")

	tanvir := as(auth.Principal{UserID: "tanvir", Role: auth.RoleUser})
	require.NoError(t, l.Allow(tanvir, ratelimit.Hold, 1), "another caller's sale count is his own")
	require.NoError(t, l.Allow(tanvir, ratelimit.Hold, 2))
	require.NoError(t, l.Allow(tanvir, ratelimit.Hold, 3))
	refused(t, l.Allow(tanvir, ratelimit.Hold, 4), "holds")

	for _, key := range []string{"key-1", "key-2", "key-1", "key-2"} {
		require.NoError(t, l.Allow(as(auth.Principal{UserID: key, Role: auth.RolePartner, PartnerID: 7}), ratelimit.Hold, 1))
	}
	refused(t, l.Allow(as(auth.Principal{UserID: "key-3", Role: auth.RolePartner, PartnerID: 7}), ratelimit.Hold, 2),
		"partner-holds")

	for range 5 {
		require.NoError(t, l.Allow(context.Background(), ratelimit.Hold, 1), "no caller, not counted")
	}
}
