package eticket

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ticket"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// stored records the objects put, by key, in memory: the bucket is
// objstore's tests' subject (mocked here, as the catalog and the shard
// are: the queue in the real read database is this test's).
type stored struct {
	mu   sync.Mutex
	keys map[string]int
}

func (s *stored) Put(_ context.Context, key string, _ []byte, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key]++
	return nil
}

func (s *stored) MarkPDF(context.Context, string, string, string, time.Time) error { return nil }
func (s *stored) ResetPDFs(context.Context) error                                  { return nil }

// fixed answers one show and its confirmed bookings (the catalog and the
// shard, mocked).
type fixed struct {
	show   catalog.Show
	booked []*eventsv1.BookingConfirmed
}

func (f fixed) GetShow(context.Context, int64) (catalog.Show, error) { return f.show, nil }
func (f fixed) ConfirmedBookings(context.Context, int64) ([]*eventsv1.BookingConfirmed, error) {
	return f.booked, nil
}

// TestReprintsAPageAtATime (decision 0484): a show's e-tickets queued
// again are made a page at a time in order id order, each PDF once a
// request; a request while a reprint runs starts it over; with the queue
// empty there is nothing to make.
func TestReprintsAPageAtATime(t *testing.T) {
	ctx := context.Background()
	db, err := pg.Open(ctx, "read", schematest.Fresh(t, migrations.Read), 4)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	show, _ := demoOrder()
	f := fixed{show: show}
	for i := range 2*reprintOrders + 5 {
		f.booked = append(f.booked, &eventsv1.BookingConfirmed{ShowId: show.ID, OrderId: fmt.Sprintf("ord_1_%016x", (i*37)%1000+1),
			UserId: "rumana", Seats: []string{fmt.Sprintf("A%d", i+1)}, Total: &commonv1.Money{AmountMinor: 120000, Currency: "BDT"},
			OccurredAt: timestamppb.New(show.StartsAt.Add(-24 * time.Hour))})
	}
	objects := &stored{keys: map[string]int{}}
	p := NewProjector(objects, objects, f, f, ticket.NewCodes(keyset.FromSecret("test", keyset.TicketCodes)), db, time.Now)

	made, err := p.Reprint(ctx)
	require.NoError(t, err)
	require.False(t, made, "nothing queued")
	require.NoError(t, p.requestReprint(ctx, show.ID))
	pages := 0
	for {
		made, err := p.Reprint(ctx)
		require.NoError(t, err)
		if !made {
			break
		}
		pages++
		if pages == 1 {
			var after string
			require.NoError(t, db.QueryRow(ctx, `SELECT after_order FROM eticket_reprints`).Scan(&after))
			ids := make([]string, len(f.booked))
			for i, b := range f.booked {
				ids[i] = b.GetOrderId()
			}
			sort.Strings(ids)
			require.Equal(t, ids[reprintOrders-1], after, "the first page is the first orders by id")
			require.Len(t, objects.keys, 2*reprintOrders, "both languages of each")
		}
	}
	require.Equal(t, 3, pages, "two full pages and the rest")
	require.Len(t, objects.keys, 2*len(f.booked))
	for k, n := range objects.keys {
		require.Equal(t, 1, n, "%s made once", k)
	}

	// Half way through, the show changes again: its reprint starts over.
	require.NoError(t, p.requestReprint(ctx, show.ID))
	_, err = p.Reprint(ctx)
	require.NoError(t, err)
	require.NoError(t, p.requestReprint(ctx, show.ID))
	for {
		made, err := p.Reprint(ctx)
		require.NoError(t, err)
		if !made {
			break
		}
	}
	first := fmt.Sprintf("tickets/%d/ord_1_%016x.pdf", show.ID, 1)
	require.Equal(t, 3, objects.keys[first], "made by the first reprint, the interrupted one's first page and the one started over")
	late := fmt.Sprintf("tickets/%d/ord_1_%016x.pdf", show.ID, 999)
	require.Equal(t, 2, objects.keys[late], "an order past the first page: the interrupted reprint never reached it, the one started over did")
	var left int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM eticket_reprints`).Scan(&left))
	require.Zero(t, left)
}
