package api_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/ticket"
)

// verifyOffline checks a code as a gate device does (decision 0390): with
// the public keys of GetTicketKeys, and nothing else.
func verifyOffline(keys []*ticketsv1.TicketKey, code string) (ticketID, place string, ok bool) {
	parts := strings.Split(code, ".")
	if len(parts) != 4 || parts[0] != "SGT3" {
		return "", "", false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return "", "", false
	}
	for _, k := range keys {
		if k.GetKeyId() != parts[1] || k.GetAlgorithm() != "Ed25519" {
			continue
		}
		if !ed25519.Verify(k.GetPublicKey(), []byte(strings.Join(parts[:3], ".")), sig) {
			return "", "", false
		}
		raw, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			return "", "", false
		}
		ticketID, place, ok = strings.Cut(string(raw), "|")
		return ticketID, place, ok
	}
	return "", "", false
}

// anonymousTickets is a TicketService client with no credential.
func anonymousTickets(env *apptest.Env) ticketsv1connect.TicketServiceClient {
	return ticketsv1connect.NewTicketServiceClient(env.HTTP, env.URL)
}

// ticketKeys asks for the public keys with no credential.
func ticketKeys(t *testing.T, env *apptest.Env) []*ticketsv1.TicketKey {
	t.Helper()
	r, err := anonymousTickets(env).GetTicketKeys(context.Background(), connect.NewRequest(&ticketsv1.GetTicketKeysRequest{}))
	require.NoError(t, err)
	return r.Msg.GetKeys()
}

// TestGateVerifiesServerSignedCodesWithNoSecret: the codes the server signs
// now are Ed25519 signatures that the public keys (anyone may fetch them,
// over Connect or REST) verify with no secret; a forged one is refused
// offline and at the gate. An HMAC code of before (SGT2) still checks in
// at the server while its key is listed (decision 0390).
func TestGateVerifiesServerSignedCodesWithNoSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Tickets: true, Projectors: true})
	show := createShow(t, env, seatedShow("Offline gate", 1, 4))
	b := newBuyer(t, env, "rumana")
	paid(t, b, show.GetShowId(), "A1")
	old := paid(t, b, show.GetShowId(), "A2")
	mine := myTickets(t, ticketsAs(t, env, "rumana", auth.RoleUser), func(ts []*ticketsv1.Ticket) bool { return len(ts) == 2 })
	var issued *ticketsv1.Ticket
	for _, tk := range mine {
		if tk.GetSeat() == "A1" {
			issued = tk
		}
	}
	require.NotNil(t, issued)
	require.True(t, strings.HasPrefix(issued.GetCode(), "SGT3."), "new tickets carry Ed25519 codes: %s", issued.GetCode())

	keys := ticketKeys(t, env)
	require.Len(t, keys, 1)
	require.True(t, keys[0].GetSigning())
	require.Len(t, keys[0].GetPublicKey(), ed25519.PublicKeySize, "a public key, nothing more")
	id, place, ok := verifyOffline(keys, issued.GetCode())
	require.True(t, ok, "the published key verifies the server's code")
	require.Equal(t, issued.GetTicketId(), id)
	require.Equal(t, "A1", place)

	// The same keys as JSON over REST, with no credential.
	res, err := http.Get(env.URL + "/v1/ticket-keys")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	var rest struct {
		Keys []struct {
			KeyID     string `json:"key_id"`
			Algorithm string `json:"algorithm"`
			PublicKey []byte `json:"public_key"`
		} `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(body, &rest))
	require.Len(t, rest.Keys, 1)
	require.Equal(t, keys[0].GetKeyId(), rest.Keys[0].KeyID)
	require.Equal(t, "Ed25519", rest.Keys[0].Algorithm)
	require.Equal(t, keys[0].GetPublicKey(), rest.Keys[0].PublicKey)

	// Forgeries: another seat under the same signature, a signature of
	// another key, an HMAC code passed off as Ed25519.
	parts := strings.Split(issued.GetCode(), ".")
	otherSeat := strings.Join([]string{parts[0], parts[1], base64.RawURLEncoding.EncodeToString([]byte(id + "|A3")), parts[3]}, ".")
	otherKey := ticket.NewCodes(keyset.FromSecret("not-the-platform", keyset.TicketCodes)).Sign(id, "A1")
	macAsEd := "SGT3" + strings.TrimPrefix(env.App.CheckIn.Codes().SignMAC(id, "A1"), "SGT2")
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	for name, forged := range map[string]string{"other seat": otherSeat, "other key": otherKey, "HMAC as Ed25519": macAsEd} {
		_, _, ok := verifyOffline(keys, forged)
		require.False(t, ok, name)
		_, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
			Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: forged}, Gate: "north"}))
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%s: %v", name, err)
	}

	// A code printed before (HMAC, SGT2) scans at the server, online and
	// in a sync.
	oldID, err := ticket.ID(old.GetOrderId(), 1)
	require.NoError(t, err)
	oldCode := env.App.CheckIn.Codes().SignMAC(oldID, "A2")
	_, _, ok = verifyOffline(keys, oldCode)
	require.False(t, ok, "an HMAC code has no public signature")
	in, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: oldCode}, Gate: "north"}))
	require.NoError(t, err)
	require.True(t, in.Msg.GetAdmitted())
	synced := syncScans(t, gate, show.GetShowId(), device{id: "dev-a", gate: "south"}, scanOf("s1", issued.GetCode(), time.Now()))
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, synced.GetScans()[0].GetOutcome())
}

// TestTicketKeyRotationAtTheGate: a new ticket key listed first signs the
// codes issued from then on; the old key, listed after it, is still
// published, so codes it signed verify offline and check in (decision
// 0085). Once removed, its codes are refused.
func TestTicketKeyRotationAtTheGate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keys := func(s string) *keyset.Set {
		set, err := keyset.Parse(s)
		require.NoError(t, err)
		return set
	}
	oldKey, newKey := "k1:"+strings.Repeat("1", 32), "k2:"+strings.Repeat("2", 32)
	before := apptest.New(t, apptest.Options{Shards: 1, TicketKeys: keys(oldKey)})
	show := createShow(t, before, seatedShow("Rotation", 1, 4))
	o := paid(t, newBuyer(t, before, "rumana"), show.GetShowId(), "A1", "A2")
	first, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	second, err := ticket.ID(o.GetOrderId(), 2)
	require.NoError(t, err)
	oldCode := before.App.CheckIn.Codes().Sign(first, "A1")
	require.True(t, strings.HasPrefix(oldCode, "SGT3.k1."), oldCode)

	during := apptest.New(t, apptest.Options{CatalogURL: before.CatalogURL, ShardURLs: before.ShardURLs,
		TicketKeys: keys(newKey + "," + oldKey)})
	published := ticketKeys(t, during)
	require.Equal(t, []string{"k2", "k1"}, []string{published[0].GetKeyId(), published[1].GetKeyId()})
	require.True(t, published[0].GetSigning())
	require.False(t, published[1].GetSigning())
	_, _, ok := verifyOffline(published, oldCode)
	require.True(t, ok, "the old key still verifies offline")
	newCode := during.App.CheckIn.Codes().Sign(second, "A2")
	require.True(t, strings.HasPrefix(newCode, "SGT3.k2."), "the new key signs: %s", newCode)
	_, _, ok = verifyOffline(published, newCode)
	require.True(t, ok)
	gate := ticketsAs(t, during, "admin", auth.RoleAdmin)
	got := syncScans(t, gate, show.GetShowId(), device{id: "dev-a", gate: "north"},
		scanOf("s1", oldCode, time.Now()), scanOf("s2", newCode, time.Now()))
	for _, s := range got.GetScans() {
		require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, s.GetOutcome(), "%v", s)
	}

	after := apptest.New(t, apptest.Options{CatalogURL: before.CatalogURL, ShardURLs: before.ShardURLs, TicketKeys: keys(newKey)})
	_, _, ok = verifyOffline(ticketKeys(t, after), oldCode)
	require.False(t, ok, "a removed key is no longer published")
	_, err = ticketsAs(t, after, "admin", auth.RoleAdmin).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
		ShowId: show.GetShowId(), Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: oldCode}}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
}

// device is a gate device: its id, its gate, and its clock's offset
// (server minus device) as measured at its last sync.
type device struct {
	id, gate string
	offset   *time.Duration
	pending  int32
}

// scanOf is a scan of a code at device time at.
func scanOf(scanID, code string, at time.Time) *ticketsv1.GateScan {
	return &ticketsv1.GateScan{ScanId: scanID, Ticket: &ticketsv1.GateScan_Code{Code: code}, ScannedAt: timestamppb.New(at)}
}

// syncRequest is a device's batch; its device time is now on the device's
// clock.
func syncRequest(showID int64, d device, scans ...*ticketsv1.GateScan) *ticketsv1.SyncGateScansRequest {
	req := &ticketsv1.SyncGateScansRequest{ShowId: showID, DeviceId: d.id, Gate: d.gate, Scans: scans,
		DeviceTime: timestamppb.Now(), Pending: d.pending}
	if d.offset != nil {
		req.ClockOffset = durationpb.New(*d.offset)
		req.DeviceTime = timestamppb.New(time.Now().Add(-*d.offset))
	}
	return req
}

func syncScans(t *testing.T, c ticketsv1connect.TicketServiceClient, showID int64, d device, scans ...*ticketsv1.GateScan) *ticketsv1.SyncGateScansResponse {
	t.Helper()
	r, err := c.SyncGateScans(context.Background(), connect.NewRequest(syncRequest(showID, d, scans...)))
	require.NoError(t, err)
	require.Len(t, r.Msg.GetScans(), len(scans))
	return r.Msg
}

func gateStatus(t *testing.T, c ticketsv1connect.TicketServiceClient, showID int64) *ticketsv1.GetGateStatusResponse {
	t.Helper()
	r, err := c.GetGateStatus(context.Background(), connect.NewRequest(&ticketsv1.GetGateStatusRequest{ShowId: showID}))
	require.NoError(t, err)
	return r.Msg
}

func admissions(t *testing.T, c ticketsv1connect.TicketServiceClient, showID int64) map[string]*ticketsv1.Admission {
	t.Helper()
	out := map[string]*ticketsv1.Admission{}
	token := ""
	for {
		r, err := c.GetAdmissionList(context.Background(), connect.NewRequest(&ticketsv1.GetAdmissionListRequest{
			ShowId: showID, PageSize: 2, PageToken: token}))
		require.NoError(t, err)
		for _, a := range r.Msg.GetAdmissions() {
			require.NotContains(t, out, a.GetTicketId(), "a ticket on two pages")
			out[a.GetTicketId()] = a
		}
		if token = r.Msg.GetNextPageToken(); token == "" {
			return out
		}
	}
}

// TestGateSettlesTheEarliestScanByCorrectedClocks: three gate devices admit
// the same ticket with no network; their clocks are 10 minutes fast,
// right, and an hour slow, and each says so with the offset it measured at
// its last sync. The devices' own times would make the slow one first; on
// the server's clock the accurate one scanned first. It is the admission
// whatever order the devices sync in: the fast device, syncing first, is
// admitted until the earlier scans arrive, then turns duplicate; every
// duplicate names the admission's gate and time (decision 0392).
func TestGateSettlesTheEarliestScanByCorrectedClocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Three gates", 1, 4))
	o := paid(t, newBuyer(t, env, "rumana"), show.GetShowId(), "A1")
	id, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	code := env.App.CheckIn.Codes().Sign(id, "A1")
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)

	real := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond) // when the crowd came
	fast := device{id: "dev-fast", gate: "north", offset: ptr(-10 * time.Minute)}
	right := device{id: "dev-right", gate: "east", offset: ptr(time.Duration(0))}
	slow := device{id: "dev-slow", gate: "south", offset: ptr(time.Hour)}
	// Real times: right at +2 s, fast at +5 s, slow at +8 s.
	fastScan := scanOf("f1", code, real.Add(5*time.Second+10*time.Minute))
	rightScan := scanOf("r1", code, real.Add(2*time.Second))
	slowScan := scanOf("s1", code, real.Add(8*time.Second-time.Hour))

	got := syncScans(t, gate, show.GetShowId(), fast, fastScan)
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, got.GetScans()[0].GetOutcome(), "first to arrive, first known")
	require.Equal(t, real.Add(5*time.Second), got.GetScans()[0].GetSettledTime().AsTime(), "put on the server's clock")
	got = syncScans(t, gate, show.GetShowId(), slow, slowScan)
	dup := got.GetScans()[0]
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, dup.GetOutcome(), "its device time is the earliest, its real time not")
	require.Equal(t, "north", dup.GetAdmittedGate())
	got = syncScans(t, gate, show.GetShowId(), right, rightScan)
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, got.GetScans()[0].GetOutcome(), "the earliest takes the admission")

	st := gateStatus(t, gate, show.GetShowId())
	require.EqualValues(t, 1, st.GetAdmittedCount())
	require.EqualValues(t, 2, st.GetConflictCount())
	byScan := map[string]*ticketsv1.SettledScan{}
	for _, c := range st.GetConflicts() {
		byScan[c.GetScanId()] = c
	}
	for scan, ownGate := range map[string]string{"f1": "north", "s1": "south"} {
		c := byScan[scan]
		require.NotNil(t, c, scan)
		require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, c.GetOutcome(), scan)
		require.Equal(t, ownGate, c.GetGate(), "both gates: its own")
		require.Equal(t, "east", c.GetAdmittedGate(), "and the admission's")
		require.Equal(t, "dev-right", c.GetAdmittedDeviceId())
		require.Equal(t, real.Add(2*time.Second), c.GetAdmittedAt().AsTime(), "and both times")
		require.Equal(t, id, c.GetTicketId())
	}
	require.Equal(t, real.Add(5*time.Second), byScan["f1"].GetSettledTime().AsTime())
	require.Equal(t, real.Add(8*time.Second), byScan["s1"].GetSettledTime().AsTime())
	devices := map[string]*ticketsv1.GateDevice{}
	for _, d := range st.GetDevices() {
		devices[d.GetDeviceId()] = d
	}
	require.Len(t, devices, 3)
	require.EqualValues(t, 1, devices["dev-right"].GetAdmitted())
	require.EqualValues(t, 1, devices["dev-fast"].GetDuplicates())
	require.Equal(t, -10*time.Minute, devices["dev-fast"].GetClockOffset().AsDuration())
	require.Equal(t, "admin", devices["dev-slow"].GetSyncedBy())

	// The ticket reads admitted at the east gate at its real time, online
	// and in the list; a scan online now is answered so.
	list := admissions(t, gate, show.GetShowId())
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN, list[id].GetStatus())
	require.Equal(t, "east", list[id].GetCheckedInGate())
	require.Equal(t, real.Add(2*time.Second), list[id].GetCheckedInAt().AsTime())
	again, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: code}, Gate: "west"}))
	require.NoError(t, err)
	require.True(t, again.Msg.GetAlreadyCheckedIn())
	require.Equal(t, "east", again.Msg.GetTicket().GetCheckedInGate())
}

// TestGateSyncTakesOverAnOnlineCheckIn: a ticket checked in online, then
// a scan of it from a device with no network that was made earlier: the
// earlier scan is the admission, and the check-in online is reported as
// its duplicate, with both gates and times. A scan after both is a
// duplicate of the offline one. A device that never measured its offset is
// corrected by the server's own measure of it.
func TestGateSyncTakesOverAnOnlineCheckIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Online and off", 1, 4))
	o := paid(t, newBuyer(t, env, "rumana"), show.GetShowId(), "A1")
	id, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	in, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "counter"}))
	require.NoError(t, err)
	require.True(t, in.Msg.GetAdmitted())
	onlineAt := in.Msg.GetTicket().GetCheckedInAt().AsTime()

	earlier := onlineAt.Add(-time.Minute)
	typed := &ticketsv1.GateScan{ScanId: "t1", Ticket: &ticketsv1.GateScan_TicketId{TicketId: strings.ToUpper(id)},
		ScannedAt: timestamppb.New(earlier)}
	got := syncScans(t, gate, show.GetShowId(), device{id: "bus-stop-1", gate: "Cumilla stop"}, typed)
	s := got.GetScans()[0]
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, s.GetOutcome(), "%v", s)
	require.Less(t, got.GetClockOffset().AsDuration().Abs(), 10*time.Second, "measured by the server: the device's clock is right")

	st := gateStatus(t, gate, show.GetShowId())
	require.Len(t, st.GetConflicts(), 1)
	online := st.GetConflicts()[0]
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, online.GetOutcome())
	require.Empty(t, online.GetDeviceId(), "the check-in online")
	require.Equal(t, "counter", online.GetGate())
	require.Equal(t, onlineAt, online.GetSettledTime().AsTime())
	require.Equal(t, "Cumilla stop", online.GetAdmittedGate())
	require.Equal(t, s.GetSettledTime().AsTime(), online.GetAdmittedAt().AsTime())

	later := syncScans(t, gate, show.GetShowId(), device{id: "bus-stop-2", gate: "Feni stop", offset: ptr(time.Duration(0))},
		scanOf("x1", env.App.CheckIn.Codes().Sign(id, "A1"), time.Now()))
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, later.GetScans()[0].GetOutcome())
	require.Equal(t, "Cumilla stop", later.GetScans()[0].GetAdmittedGate())
	require.EqualValues(t, 1, later.GetAdmittedCount())
}

// TestConcurrentSyncsAdmitATicketOnce: eight devices each admitted the same
// five tickets with no network, at random times, and sync at once, each
// batch sent twice (a retry on a weak network). Every ticket has exactly
// one admission, the earliest of its scans; every other scan is its
// duplicate, naming it; the retries settled nothing twice.
func TestConcurrentSyncsAdmitATicketOnce(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Stadium gates", 1, 5))
	o := paid(t, newBuyer(t, env, "rumana"), show.GetShowId(), "A1", "A2", "A3", "A4", "A5")
	codes := map[string]string{}
	for i := range 5 {
		id, err := ticket.ID(o.GetOrderId(), i+1)
		require.NoError(t, err)
		codes[id] = env.App.CheckIn.Codes().Sign(id, fmt.Sprintf("A%d", i+1))
	}
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	const devices = 8
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	type scanned struct {
		device, gate string
		at           time.Time
	}
	earliest := map[string]scanned{}
	batches := make([]*ticketsv1.SyncGateScansRequest, devices)
	for d := range devices {
		dev := device{id: fmt.Sprintf("dev-%d", d), gate: fmt.Sprintf("gate-%d", d), offset: ptr(time.Duration(0))}
		var scans []*ticketsv1.GateScan
		k := 0
		for id, code := range codes {
			at := base.Add(time.Duration((d*7+k*13)%29) * time.Second).Add(time.Duration(d) * time.Millisecond)
			k++
			scans = append(scans, scanOf(fmt.Sprintf("scan-%d", k), code, at))
			if e, ok := earliest[id]; !ok || at.Before(e.at) {
				earliest[id] = scanned{dev.id, dev.gate, at}
			}
		}
		batches[d] = syncRequest(show.GetShowId(), dev, scans...)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 2*devices)
	for i := range 2 * devices {
		wg.Go(func() {
			<-start
			_, errs[i] = gate.SyncGateScans(context.Background(), connect.NewRequest(batches[i%devices]))
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}

	st := gateStatus(t, gate, show.GetShowId())
	require.EqualValues(t, 5, st.GetAdmittedCount(), "one admission a ticket")
	require.EqualValues(t, 5*(devices-1), st.GetConflictCount(), "every other scan a duplicate, none settled twice")
	var admitted int64
	for _, d := range st.GetDevices() {
		admitted += d.GetAdmitted()
		require.Zero(t, d.GetRefunded()+d.GetInvalid())
	}
	require.EqualValues(t, 5, admitted)
	for _, c := range st.GetConflicts() {
		e := earliest[c.GetTicketId()]
		require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, c.GetOutcome())
		require.Equal(t, e.gate, c.GetAdmittedGate(), "ticket %s: the duplicate names the earliest scan", c.GetTicketId())
		require.Equal(t, e.device, c.GetAdmittedDeviceId())
		require.Equal(t, e.at, c.GetAdmittedAt().AsTime())
	}
	list := admissions(t, gate, show.GetShowId())
	for id, e := range earliest {
		require.Equal(t, e.gate, list[id].GetCheckedInGate(), id)
		require.Equal(t, e.at, list[id].GetCheckedInAt().AsTime(), id)
	}
	// The outbox announced each ticket's admission and each take-over,
	// none twice for a scan: at most one event a scan that was admitted.
	pool, err := env.App.Router.ForShow(context.Background(), show.GetShowId())
	require.NoError(t, err)
	var events int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox
		WHERE show_id = $1 AND event_type = 'seatghor.events.v1.TicketCheckedIn'`, show.GetShowId()).Scan(&events))
	require.GreaterOrEqual(t, events, 5)
	require.LessOrEqual(t, events, 5*devices)

	// The same batch again, later: the same answers, nothing new.
	again, err := gate.SyncGateScans(context.Background(), connect.NewRequest(batches[0]))
	require.NoError(t, err)
	for _, s := range again.Msg.GetScans() {
		e := earliest[s.GetTicketId()]
		if e.device == "dev-0" {
			require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, s.GetOutcome())
		} else {
			require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE, s.GetOutcome())
		}
	}
	var after int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox
		WHERE show_id = $1 AND event_type = 'seatghor.events.v1.TicketCheckedIn'`, show.GetShowId()).Scan(&after))
	require.Equal(t, events, after, "a retried batch announces nothing")
	require.EqualValues(t, 5*(devices-1), gateStatus(t, gate, show.GetShowId()).GetConflictCount())
}

// TestGateSyncReportsATicketRefundedMeanwhile: the gate downloaded the
// list while a ticket was valid; the buyer cancelled it (and was refunded)
// while the gate had no network, and the gate admitted it. The sync
// reports it refunded (cancelled), admits nothing, and the supervisor sees
// it; the list now says so. A ticket of another show and a forged code are
// invalid.
func TestGateSyncReportsATicketRefundedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Refunded meanwhile", 1, 4))
	other := createShow(t, env, seatedShow("Another show", 1, 4))
	b := newBuyer(t, env, "rumana")
	o := paid(t, b, show.GetShowId(), "A1")
	elsewhere := paid(t, b, other.GetShowId(), "A1")
	id, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	otherID, err := ticket.ID(elsewhere.GetOrderId(), 1)
	require.NoError(t, err)
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_VALID, admissions(t, gate, show.GetShowId())[id].GetStatus())

	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.NoError(t, err)
	codes := env.App.CheckIn.Codes()
	got := syncScans(t, gate, show.GetShowId(), device{id: "dev-a", gate: "north", offset: ptr(time.Duration(0))},
		scanOf("r1", codes.Sign(id, "A1"), time.Now().Add(-time.Minute)),
		scanOf("o1", codes.Sign(otherID, "A1"), time.Now().Add(-time.Minute)),
		scanOf("f1", codes.Sign(id, "A2"), time.Now().Add(-time.Minute)))
	refunded := got.GetScans()[0]
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_REFUNDED, refunded.GetOutcome(), "%v", refunded)
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_CANCELLED, refunded.GetTicketStatus())
	require.Equal(t, "A1", refunded.GetSeat())
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_INVALID, got.GetScans()[1].GetOutcome(), "another show's ticket")
	require.Contains(t, got.GetScans()[1].GetDetail(), fmt.Sprint(other.GetShowId()))
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_INVALID, got.GetScans()[2].GetOutcome(), "a code for another seat")
	require.Zero(t, got.GetAdmittedCount(), "nothing admitted")

	st := gateStatus(t, gate, show.GetShowId())
	require.EqualValues(t, 3, st.GetConflictCount())
	require.Len(t, st.GetDevices(), 1)
	require.EqualValues(t, 1, st.GetDevices()[0].GetRefunded())
	require.EqualValues(t, 2, st.GetDevices()[0].GetInvalid())
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_CANCELLED, admissions(t, gate, show.GetShowId())[id].GetStatus())
	order := b.getOrder(o.GetOrderId())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, order.GetStatus(), "the order stays cancelled")
}

// TestAdmissionListAndSyncAreForTheShowsGateStaff: the admission list, the
// sync and the supervisor's status are for CheckInTicket's callers: the
// show's organisation's gate staff and managers, and admins. Anyone else
// is refused and nothing is recorded; an unknown show is not found; the
// public keys need no credential.
func TestAdmissionListAndSyncAreForTheShowsGateStaff(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	mgr := as(t, o.env, "hanif-mgr", auth.RoleOperator)
	r := seatedShow("Hanif night coach", 1, 4)
	r.OrganizationId = "hanif"
	created, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(r))
	require.NoError(t, err)
	show := created.Msg.GetShow().GetShowId()
	order := paid(t, newBuyer(t, o.env, "rumana"), show, "A1")
	id, err := ticket.ID(order.GetOrderId(), 1)
	require.NoError(t, err)
	code := o.env.App.CheckIn.Codes().Sign(id, "A1")

	type call func(c ticketsv1connect.TicketServiceClient) error
	calls := map[string]call{
		"list": func(c ticketsv1connect.TicketServiceClient) error {
			_, err := c.GetAdmissionList(ctx, connect.NewRequest(&ticketsv1.GetAdmissionListRequest{ShowId: show}))
			return err
		},
		"sync": func(c ticketsv1connect.TicketServiceClient) error {
			_, err := c.SyncGateScans(ctx, connect.NewRequest(syncRequest(show, device{id: "dev-x", gate: "x"},
				scanOf("x1", code, time.Now()))))
			return err
		},
		"status": func(c ticketsv1connect.TicketServiceClient) error {
			_, err := c.GetGateStatus(ctx, connect.NewRequest(&ticketsv1.GetGateStatusRequest{ShowId: show}))
			return err
		},
	}
	for name, c := range calls {
		require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(c(anonymousTickets(o.env))), name)
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(c(ticketsAs(t, o.env, "rumana", auth.RoleUser))), name)
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(c(ticketsAs(t, o.env, "shyamoli-gate", auth.RoleOperator))),
			"%s: another organisation's gate staff", name)
	}
	st := gateStatus(t, ticketsAs(t, o.env, "hanif-mgr", auth.RoleOperator), show)
	require.Empty(t, st.GetDevices(), "the refused syncs recorded nothing")
	require.Zero(t, st.GetAdmittedCount())
	for name, c := range calls {
		require.NoError(t, c(ticketsAs(t, o.env, "hanif-gate", auth.RoleOperator)), "%s: the show's gate staff", name)
		require.NoError(t, c(ticketsAs(t, o.env, "hanif-mgr", auth.RoleOperator)), "%s: its manager", name)
	}
	_, err = ticketsAs(t, o.env, "hanif-gate", auth.RoleOperator).GetAdmissionList(ctx,
		connect.NewRequest(&ticketsv1.GetAdmissionListRequest{ShowId: show + 1000}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	require.NotEmpty(t, ticketKeys(t, o.env))
}

// TestGateSyncRefusesBadInput: a malformed batch is refused whole, naming
// the field, and settles nothing.
func TestGateSyncRefusesBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Bad input", 1, 4))
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	ok := func() *ticketsv1.SyncGateScansRequest {
		return syncRequest(show.GetShowId(), device{id: "dev-a", gate: "north"}, scanOf("s1", "SGT3.x.y.z", time.Now()))
	}
	many := make([]*ticketsv1.GateScan, 501)
	for i := range many {
		many[i] = scanOf(fmt.Sprintf("s%d", i), "SGT3.x.y.z", time.Now())
	}
	for field, edit := range map[string]func(*ticketsv1.SyncGateScansRequest){
		"device_id":           func(r *ticketsv1.SyncGateScansRequest) { r.DeviceId = "" },
		"device_id ":          func(r *ticketsv1.SyncGateScansRequest) { r.DeviceId = "a b" },
		"device_time":         func(r *ticketsv1.SyncGateScansRequest) { r.DeviceTime = nil },
		"scans":               func(r *ticketsv1.SyncGateScansRequest) { r.Scans = many },
		"scans[0].scan_id":    func(r *ticketsv1.SyncGateScansRequest) { r.Scans[0].ScanId = "" },
		"scans[0].scanned_at": func(r *ticketsv1.SyncGateScansRequest) { r.Scans[0].ScannedAt = nil },
		"clock_offset":        func(r *ticketsv1.SyncGateScansRequest) { r.ClockOffset = durationpb.New(400 * 24 * time.Hour) },
		"pending":             func(r *ticketsv1.SyncGateScansRequest) { r.Pending = -1 },
	} {
		req := ok()
		edit(req)
		_, err := gate.SyncGateScans(ctx, connect.NewRequest(req))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%s: %v", field, err)
		require.Equal(t, strings.TrimSpace(field), badField(t, err))
	}
	require.Empty(t, gateStatus(t, gate, show.GetShowId()).GetDevices())
	// A heartbeat (no scans) records the device and what it still holds.
	beat := syncRequest(show.GetShowId(), device{id: "dev-a", gate: "north", pending: 3})
	_, err := gate.SyncGateScans(ctx, connect.NewRequest(beat))
	require.NoError(t, err)
	st := gateStatus(t, gate, show.GetShowId())
	require.Len(t, st.GetDevices(), 1)
	require.EqualValues(t, 3, st.GetDevices()[0].GetPending())
	require.True(t, slices.ContainsFunc(st.GetDevices(), func(d *ticketsv1.GateDevice) bool { return d.GetGate() == "north" }))
}
