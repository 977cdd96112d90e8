package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// BenchmarkCreateHold measures a one-seat CreateHold through the whole API
// (HTTP, Connect, auth, validation, idempotency record) next to the same
// booking call made directly on the shard pool, in one process and
// interleaved, and reports the API's cost as a ratio (api/direct): on a
// shared, noisy machine the ratio means more than either time.
func BenchmarkCreateHold(b *testing.B) {
	env := apptest.New(b, apptest.Options{})
	ctx := context.Background()
	const users = 200
	newShow := func() int64 {
		req := seatedShow("bench", 100, 100) // 10,000 seats
		req.MaxSeatsPerAccount, req.MaxSeatsPerHold = 100, 10
		return createShow(b, env, req).GetShowId()
	}
	apiShow, directShow := newShow(), newShow()
	cs := make([]clients, users)
	for i := range cs {
		cs[i] = as(b, env, fmt.Sprintf("bench-%d", i), auth.RoleUser)
	}
	rows := rowsAZ(100)
	seat := func(i int) string { return fmt.Sprintf("%s%d", rows[(i/100)%100], 1+i%100) }

	var apiTime, directTime time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%10000 == 0 { // every seat of both shows taken
			apiShow, directShow = newShow(), newShow()
		}
		start := time.Now()
		if _, err := env.App.Booking.CreateHold(ctx, fmt.Sprintf("bench-%d", i%users),
			booking.HoldRequest{ShowID: directShow, Seats: []string{seat(i)}}); err != nil {
			b.Fatal(err)
		}
		directTime += time.Since(start)
		start = time.Now()
		if _, err := cs[i%users].holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
			ShowId: apiShow, Seats: []string{seat(i)}})); err != nil {
			b.Fatal(err)
		}
		apiTime += time.Since(start)
	}
	b.ReportMetric(float64(apiTime)/float64(directTime), "api/direct")
	b.ReportMetric(float64(apiTime.Microseconds())/float64(b.N), "api-µs/op")
	b.ReportMetric(float64(directTime.Microseconds())/float64(b.N), "direct-µs/op")
}
