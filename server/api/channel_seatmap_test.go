package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/server/auth"
)

// channelMap is a seat map as one caller read it: each seat's 2-bit state
// and each GA area's places left.
type channelMap struct {
	states map[string]int
	ga     map[string]int32
}

// free lists the seats the map shows free, in layout order.
func (m channelMap) free(layout *seatmapv1.GetSeatLayoutResponse) []string {
	var out []string
	for _, seat := range layoutSeats(layout) {
		if m.states[seat] == 0 {
			out = append(out, seat)
		}
	}
	return out
}

// layoutSeats lists a layout's seats in layout order.
func layoutSeats(layout *seatmapv1.GetSeatLayoutResponse) []string {
	var out []string
	for _, s := range layout.GetSections() {
		for _, r := range s.GetRows() {
			out = append(out, r.GetSeats()...)
		}
	}
	return out
}

// readChannelMap reads an answer of GetSeatMap (availability only or
// whole, of the show or a section) against the show's layout.
func readChannelMap(t *testing.T, layout *seatmapv1.GetSeatLayoutResponse, m *seatmapv1.GetSeatMapResponse) channelMap {
	t.Helper()
	seats := layoutSeats(layout)
	out := channelMap{states: map[string]int{}, ga: map[string]int32{}}
	first := int(m.GetAvailabilityOffset())
	for i := range int(m.GetAvailabilityCount()) {
		out.states[seats[first+i]] = int(m.GetAvailability()[i/4]>>(2*(i%4))) & 3
	}
	for _, g := range m.GetGaAreas() {
		out.ga[g.GetName()] = g.GetRemaining()
	}
	return out
}

// TestPartnerSeatMapIsItsChannel (issue 29 item 1, decisions 0324 and
// 0325): a ring-fenced partner (its allocation closes general sale to it)
// reads the seat map with its own API key, on the RPC and on the fast path
// (REST and Connect GET, the public map read in between and at the same
// time), and sees exactly its free allocated seats free, its held one
// held, everything else taken, and its GA quota's places; then holds a
// seat it sees free, and the map follows. The public sees every allocated
// seat taken; a partner whose allocation keeps general sale open sees both;
// a partner without an allocation sees the public map. A hold outside the
// caller's channel is refused SEATS_NOT_IN_CHANNEL, a lost race still
// SEATS_UNAVAILABLE.
func TestPartnerSeatMapIsItsChannel(t *testing.T) {
	const share = 100 * time.Millisecond // the fast path shares reads (decision 0232), per channel
	s := newSeatmapServersSharing(t, share)
	env := s.env
	ctx := context.Background()
	req := seatedShow("channels", 4, 5) // A1…D5
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: 40, PriceMinor: 10000, Buckets: 4}}
	show := createShow(t, env, req).GetShowId()

	ring := newPartner(t, env, "Ring-fenced agency", 500).GetPartnerId()
	open := newPartner(t, env, "Open agency", 500).GetPartnerId()
	plain := newPartner(t, env, "Plain agency", 500).GetPartnerId()
	admin := withToken(env, env.Token(t, "admin", auth.RoleAdmin))
	returnAt := timestamppb.New(time.Now().Add(time.Hour))
	for _, a := range []*partnerv1.AllocateSeatsRequest{
		{PartnerId: ring, Seats: seatList("A", 1, 5)},
		{PartnerId: ring, Quantity: proto.Int32(10)},
		{PartnerId: open, Seats: []string{"B1", "B2"}, GeneralSale: true},
	} {
		a.ShowId, a.ReturnAt = show, returnAt
		_, err := admin.alloc.AllocateSeats(ctx, connect.NewRequest(a))
		require.NoError(t, err)
	}
	keyOf := func(partner int64) string {
		return newAPIKey(t, env, partner, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret()
	}
	ringKey, openKey, plainKey := keyOf(ring), keyOf(open), keyOf(plain)
	ringAPI := withBearer(env, ringKey)
	public := as(t, env, "rumana", auth.RoleUser)

	// A public buyer holds C1, one of the ring-fenced partner's buyers A2.
	_, err := public.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"C1"}}))
	require.NoError(t, err)
	_, err = ringAPI.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err)
	layoutResp, err := public.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	layout := layoutResp.Msg
	waitForMapVersion(t, s, show, public)

	all := layoutSeats(layout)
	without := func(seats ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(seats, s) })
	}
	ringFree := []string{"A1", "A3", "A4", "A5"}
	publicFree := without("A1", "A2", "A3", "A4", "A5", "B1", "B2", "C1")
	// want checks one caller's map: which seats are free, the state of a
	// few, and the GA places.
	want := func(t *testing.T, who string, m channelMap, free []string, states map[string]int, field int32) {
		t.Helper()
		require.Equal(t, free, m.free(layout), "%s: the free seats", who)
		for seat, st := range states {
			require.Equal(t, st, m.states[seat], "%s: %s", who, seat)
		}
		require.Equal(t, field, m.ga["Field"], "%s: the Field's places", who)
	}
	wantRing := func(t *testing.T, m channelMap) {
		t.Helper()
		// A2 held by its own buyer; general sale (C1 held, D5 free) and the
		// open agency's B1 are other channels': taken.
		want(t, "the ring-fenced partner", m, ringFree, map[string]int{"A2": 1, "B1": 2, "C1": 2, "D5": 2}, 10)
	}
	wantPublic := func(t *testing.T, m channelMap) {
		t.Helper()
		want(t, "the public", m, publicFree, map[string]int{"A1": 2, "A2": 2, "B1": 2, "C1": 1}, 30)
	}

	// The RPC (a Connect POST, the real handler), with the partner's key.
	rpc, err := ringAPI.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	wantRing(t, readChannelMap(t, layout, rpc.Msg))

	// The fast path: the public read between the partner's reads.
	base := fmt.Sprintf("/v1/shows/%d/seatmap", show)
	availability := base + "?layout_etag=" + layout.GetEtag()
	header := func(credential string) http.Header {
		return http.Header{"Authorization": {"Bearer " + credential}}
	}
	publicHeader := header(env.Token(t, "reader", auth.RoleUser))
	fastRead := func(t *testing.T, path string, h http.Header) (channelMap, httpAnswer) {
		t.Helper()
		a := getREST(t, s.fast, path, h)
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		var m seatmapv1.GetSeatMapResponse
		require.NoError(t, protojson.Unmarshal([]byte(a.body), &m))
		return readChannelMap(t, layout, &m), a
	}
	calls := s.fastRPC.calls.Load()
	m, firstPublic := fastRead(t, availability, publicHeader)
	wantPublic(t, m)
	m, _ = fastRead(t, availability, header(ringKey))
	wantRing(t, m)
	m, again := fastRead(t, availability, publicHeader)
	wantPublic(t, m)
	require.Equal(t, firstPublic, again, "the public's answer is the public's, whoever read in between")
	require.Equal(t, calls, s.fastRPC.calls.Load(), "answered by the fast path")

	// The fast path answers the partner as the RPC path does, in every
	// form (headers, ETag and 304 included).
	connectMsg := fmt.Sprintf(`{"showId":"%d","layoutEtag":"%s"}`, show, layout.GetEtag())
	for _, tc := range []fastCase{
		{"availability only", availability, header(ringKey), true, 200},
		{"a section", availability + "&section=Main", header(ringKey), true, 200},
		{"whole map", base, header(ringKey), true, 200},
		{"Connect GET", connectGet(connectMsg, "connect", "v1", "encoding", "json"), header(ringKey), true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.answersAsTheRPC(t, tc)
			m, _ := fastRead(t, tc.path, tc.header)
			wantRing(t, m)
		})
	}

	// Every channel at once, within one share window: each its own view.
	wantOpen := func(t *testing.T, m channelMap) {
		t.Helper()
		want(t, "the open partner", m, append([]string{"B1", "B2"}, publicFree...), map[string]int{"A1": 2, "C1": 1}, 30)
	}
	readers := []struct {
		h     http.Header
		check func(*testing.T, channelMap)
	}{
		{publicHeader, wantPublic},
		{header(ringKey), wantRing},
		{header(openKey), wantOpen},
		{header(plainKey), wantPublic}, // no allocation: the public map
	}
	answers := make([]httpAnswer, 32)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = getREST(t, s.fast, availability, readers[i%len(readers)].h) })
	}
	wg.Wait()
	for i, a := range answers {
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		var m seatmapv1.GetSeatMapResponse
		require.NoError(t, protojson.Unmarshal([]byte(a.body), &m))
		readers[i%len(readers)].check(t, readChannelMap(t, layout, &m))
	}

	// Holds: outside the channel its own reason, a lost race as before.
	hold := func(c clients, seats ...string) error {
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: seats}))
		return err
	}
	require.Equal(t, []string{"C2"}, notInChannel(t, hold(ringAPI.clients, "A1", "C2")).GetSeats(), "general sale is closed to it")
	require.Equal(t, []string{"B1"}, notInChannel(t, hold(ringAPI.clients, "B1")).GetSeats(), "the open partner's seat")
	require.Equal(t, []string{"A2"}, unavailable(t, hold(ringAPI.clients, "A2")).GetSeats(), "its own seat, held: a lost race")
	require.Equal(t, []string{"A3"}, notInChannel(t, hold(public, "A3", "C2")).GetSeats(), "the public and an allocated seat")
	require.Equal(t, []string{"C1"}, unavailable(t, hold(public, "C1")).GetSeats(), "a public seat held: a lost race")

	// The partner holds a seat it sees free, and GA places of its quota.
	require.NoError(t, hold(ringAPI.clients, "A1"))
	_, err = ringAPI.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Quantity: proto.Int32(3)}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, public)
	time.Sleep(share) // past the reads shared before the holds
	m, _ = fastRead(t, availability, header(ringKey))
	want(t, "the ring-fenced partner after its holds", m, []string{"A3", "A4", "A5"}, map[string]int{"A1": 1, "A2": 1, "C2": 2}, 7)
	rpc, err = ringAPI.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	want(t, "the ring-fenced partner after its holds (RPC)", readChannelMap(t, layout, rpc.Msg), []string{"A3", "A4", "A5"},
		map[string]int{"A1": 1}, 7)
	m, _ = fastRead(t, availability, publicHeader)
	wantPublic(t, m) // its holds are inside its allocation: the public map did not move
}
