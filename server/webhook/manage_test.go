package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/webhook"
)

// keyed is a caller with a Bearer credential (an API key or a token): its
// webhook, partner and hold clients, each write with a fresh
// Idempotency-Key.
type keyed struct {
	hooks    partnerv1connect.WebhookServiceClient
	partners partnerv1connect.PartnerServiceClient
	holds    bookingv1connect.HoldServiceClient
}

func bearer(env *apptest.Env, credential string) keyed {
	opts := signedIn(credential)
	return keyed{
		hooks:    partnerv1connect.NewWebhookServiceClient(env.HTTP, env.URL, opts),
		partners: partnerv1connect.NewPartnerServiceClient(env.HTTP, env.URL, opts),
		holds:    bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, opts),
	}
}

// reseller is a partner that exists, its signed-in account's clients and
// its user id.
type reseller struct {
	id      int64
	user    string
	account keyed
}

func newReseller(t *testing.T, env *apptest.Env, name string) reseller {
	t.Helper()
	p, err := bearer(env, env.Token(t, "ops", auth.RoleAdmin)).partners.CreatePartner(context.Background(),
		connect.NewRequest(&partnerv1.CreatePartnerRequest{Name: name, CommissionBps: 500}))
	require.NoError(t, err)
	id := p.Msg.GetPartner().GetPartnerId()
	user := "staff-of-" + strconv.FormatInt(id, 10)
	return reseller{id: id, user: user, account: bearer(env, env.PartnerToken(t, user, id))}
}

// key makes an API key of scope for the partner; it returns its id and
// its clients.
func (r reseller) key(t *testing.T, env *apptest.Env, scope partnerv1.ApiKeyScope) (string, keyed) {
	t.Helper()
	k, err := r.account.partners.CreateApiKey(context.Background(), connect.NewRequest(&partnerv1.CreateApiKeyRequest{
		PartnerId: r.id, Name: scope.String(), Scope: scope}))
	require.NoError(t, err)
	return k.Msg.GetApiKey().GetKeyId(), bearer(env, k.Msg.GetSecret())
}

// reasonOf is an error's code and ErrorInfo reason, e.g. "not_found
// WEBHOOK_ENDPOINT_NOT_FOUND".
func reasonOf(t *testing.T, err error) string {
	t.Helper()
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return ce.Code().String() + " " + info.GetReason()
			}
		}
	}
	return ce.Code().String()
}

func newEndpoint(t *testing.T, c keyed, url string, types ...string) *partnerv1.CreateEndpointResponse {
	t.Helper()
	resp, err := c.hooks.CreateEndpoint(context.Background(), connect.NewRequest(&partnerv1.CreateEndpointRequest{
		Url: url, EventTypes: types}))
	require.NoError(t, err)
	return resp.Msg
}

func endpointOf(t *testing.T, c keyed, id int64) *partnerv1.WebhookEndpoint {
	t.Helper()
	list, err := c.hooks.ListEndpoints(context.Background(), connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.NoError(t, err)
	for _, e := range list.Msg.GetEndpoints() {
		if e.GetEndpointId() == id {
			return e
		}
	}
	t.Fatalf("endpoint %d not listed", id)
	return nil
}

// auditOf is the audit log of an endpoint, oldest first, as "action by
// kind:id".
func auditOf(t *testing.T, env *apptest.Env, id int64) []string {
	t.Helper()
	entries, err := audit.Read(context.Background(), env.App.Router.Catalog(), audit.Filter{Target: "webhook-endpoint:" + strconv.FormatInt(id, 10)})
	require.NoError(t, err)
	var out []string
	for _, e := range slices.Backward(entries) {
		out = append(out, e.Action+" by "+e.Actor.String())
	}
	return out
}

// TestOnlyManagingCredentialsChangeEndpoints (issue 22 §1, decision
// 0276): a booking or read-only key of the partner may list its endpoints
// and deliveries but change none of them; a key of scope webhooks may
// change them and book nothing; the partner's signed-in account and admins
// change them, disable and delete included, each change in the audit log
// with who made it.
func TestOnlyManagingCredentialsChangeEndpoints(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	p := newReseller(t, env, "Shohoz")
	_, booking := p.key(t, env, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING)
	_, readOnly := p.key(t, env, partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY)
	hooksID, hooksKey := p.key(t, env, partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS)
	ops := bearer(env, env.Token(t, "ops", auth.RoleAdmin))

	create := &partnerv1.CreateEndpointRequest{Url: "https://leak.example/hooks", EventTypes: []string{"order.cancelled"}}
	_, err := booking.hooks.CreateEndpoint(ctx, connect.NewRequest(create))
	require.Equal(t, "permission_denied WEBHOOK_MANAGE_DENIED", reasonOf(t, err))
	_, err = readOnly.hooks.CreateEndpoint(ctx, connect.NewRequest(create))
	require.Equal(t, "permission_denied API_KEY_READ_ONLY", reasonOf(t, err))

	mine := newEndpoint(t, p.account, "https://shohoz.example/hooks", "order.cancelled").GetEndpoint()
	id := mine.GetEndpointId()
	require.Empty(t, mine.GetCreatedByKey(), "made by the signed-in account")
	refused := map[string]func(keyed) error{
		"rotate": func(c keyed) error {
			_, err := c.hooks.RotateEndpointSecret(ctx, connect.NewRequest(&partnerv1.RotateEndpointSecretRequest{EndpointId: id}))
			return err
		},
		"enable": func(c keyed) error {
			_, err := c.hooks.EnableEndpoint(ctx, connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: id}))
			return err
		},
		"disable": func(c keyed) error {
			_, err := c.hooks.DisableEndpoint(ctx, connect.NewRequest(&partnerv1.DisableEndpointRequest{EndpointId: id}))
			return err
		},
		"delete": func(c keyed) error {
			_, err := c.hooks.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: id}))
			return err
		},
		"replay": func(c keyed) error {
			_, err := c.hooks.ReplayDeliveries(ctx, connect.NewRequest(&partnerv1.ReplayDeliveriesRequest{EndpointId: id,
				Which: &partnerv1.ReplayDeliveriesRequest_EventId{EventId: "evt"}}))
			return err
		},
	}
	for name, call := range refused {
		require.Equal(t, "permission_denied WEBHOOK_MANAGE_DENIED", reasonOf(t, call(booking)), "%s with a booking key", name)
		require.Equal(t, "permission_denied API_KEY_READ_ONLY", reasonOf(t, call(readOnly)), "%s with a read-only key", name)
	}
	for _, c := range []keyed{booking, readOnly} {
		require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_ACTIVE, endpointOf(t, c, id).GetStatus(), "keys may read")
		_, err := c.hooks.ListDeliveries(ctx, connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: id}))
		require.NoError(t, err)
	}

	// The webhooks key manages the partner's endpoints and books nothing.
	viaKey := newEndpoint(t, hooksKey, "https://shohoz.example/other", "order.cancelled").GetEndpoint()
	require.Equal(t, hooksID, viaKey.GetCreatedByKey())
	require.False(t, viaKey.GetNeedsConfirmation())
	for _, name := range []string{"rotate", "enable", "replay", "disable"} {
		require.NoError(t, refused[name](hooksKey), name)
	}
	_, err = hooksKey.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: 1, Seats: []string{"A1"}}))
	require.Equal(t, "permission_denied API_KEY_READ_ONLY", reasonOf(t, err), "a webhooks key cannot book")
	_, err = hooksKey.partners.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: p.id}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "nor make keys")

	// Disabling is idempotent: disabled by the key above, the admin's
	// disable changes nothing.
	got := endpointOf(t, p.account, id)
	require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_PARTNER, got.GetDisabledBy())
	again, err := ops.hooks.DisableEndpoint(ctx, connect.NewRequest(&partnerv1.DisableEndpointRequest{EndpointId: id}))
	require.NoError(t, err)
	require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_PARTNER, again.Msg.GetEndpoint().GetDisabledBy())
	// An admin disables and deletes the partner's other endpoint.
	off, err := ops.hooks.DisableEndpoint(ctx, connect.NewRequest(&partnerv1.DisableEndpointRequest{
		EndpointId: viaKey.GetEndpointId(), Reason: "abuse report"}))
	require.NoError(t, err)
	require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED, off.Msg.GetEndpoint().GetStatus())
	require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_ADMIN, off.Msg.GetEndpoint().GetDisabledBy())
	require.Equal(t, "abuse report", off.Msg.GetEndpoint().GetDisabledReason())
	_, err = ops.hooks.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: viaKey.GetEndpointId()}))
	require.NoError(t, err)
	// The partner deletes its own; a retry with the same Idempotency-Key
	// answers the same, a new request finds nothing.
	del := connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: id})
	del.Header().Set("Idempotency-Key", "delete-"+strconv.FormatInt(id, 10))
	_, err = p.account.hooks.DeleteEndpoint(ctx, del)
	require.NoError(t, err)
	retry := connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: id})
	retry.Header().Set("Idempotency-Key", "delete-"+strconv.FormatInt(id, 10))
	_, err = p.account.hooks.DeleteEndpoint(ctx, retry)
	require.NoError(t, err)
	_, err = p.account.hooks.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: id}))
	require.Equal(t, "not_found WEBHOOK_ENDPOINT_NOT_FOUND", reasonOf(t, err))
	list, err := p.account.hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.NoError(t, err)
	require.Empty(t, list.Msg.GetEndpoints())

	account := "user:" + p.user
	key := "api_key:" + hooksID
	require.Equal(t, []string{
		"webhook_endpoint.create by " + account,
		"webhook_endpoint.rotate_secret by " + key,
		"webhook_endpoint.enable by " + key,
		"webhook_endpoint.replay by " + key,
		"webhook_endpoint.disable by " + key, // the admin's second disable changed nothing
		"webhook_endpoint.delete by " + account,
	}, auditOf(t, env, id))
	require.Equal(t, []string{
		"webhook_endpoint.create by " + key,
		"webhook_endpoint.disable by admin:ops",
		"webhook_endpoint.delete by admin:ops",
	}, auditOf(t, env, viaKey.GetEndpointId()))
}

// TestRevokingAKeyDisablesItsEndpoints (issue 22 §1, decision 0276): a
// leaked webhooks key registers its own URL; revoking the key disables
// that endpoint (the answer names it, a repeated revocation too), and the
// partner's endpoint made before keys were recorded unless the partner
// confirmed it; the leaked URL receives none of the partner's later
// events while the partner's own endpoint does.
func TestRevokingAKeyDisablesItsEndpoints(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	p := newReseller(t, env, "Shohoz")
	leakedID, leaked := p.key(t, env, partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS)
	_, other := p.key(t, env, partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS)
	attacker, partnerSide := newReceiver(t, nil), newReceiver(t, nil)

	stolen := newEndpoint(t, leaked, attacker.URL, "order.cancelled").GetEndpoint()
	own := newEndpoint(t, p.account, partnerSide.URL, "order.cancelled").GetEndpoint()
	byOtherKey := newEndpoint(t, other, "https://shohoz.example/b", "order.cancelled").GetEndpoint()
	// Two endpoints as made before the creating key was recorded (the
	// migration flags every partner endpoint then existing); the partner
	// confirms one of them.
	before := newEndpoint(t, p.account, "https://shohoz.example/legacy", "order.cancelled").GetEndpoint()
	confirmed := newEndpoint(t, p.account, "https://shohoz.example/legacy-ok", "order.cancelled").GetEndpoint()
	_, err := env.App.Router.Catalog().Exec(ctx, `UPDATE webhook_endpoints SET needs_confirmation = true WHERE endpoint_id = ANY ($1)`,
		[]int64{before.GetEndpointId(), confirmed.GetEndpointId()})
	require.NoError(t, err)
	require.True(t, endpointOf(t, p.account, before.GetEndpointId()).GetNeedsConfirmation(), "listed for the partner to confirm")
	_, err = p.account.hooks.EnableEndpoint(ctx, connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: confirmed.GetEndpointId()}))
	require.NoError(t, err)
	require.False(t, endpointOf(t, p.account, confirmed.GetEndpointId()).GetNeedsConfirmation())

	revoke := func() []int64 {
		resp, err := p.account.partners.RevokeApiKey(ctx, connect.NewRequest(&partnerv1.RevokeApiKeyRequest{KeyId: leakedID}))
		require.NoError(t, err)
		require.NotNil(t, resp.Msg.GetApiKey().GetRevokedAt())
		return resp.Msg.GetDisabledEndpointIds()
	}
	want := []int64{stolen.GetEndpointId(), before.GetEndpointId()}
	require.Equal(t, want, revoke())
	require.Equal(t, want, revoke(), "a repeated revocation answers the same")
	for _, id := range want {
		e := endpointOf(t, p.account, id)
		require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED, e.GetStatus())
		require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_KEY_REVOCATION, e.GetDisabledBy())
		require.Contains(t, e.GetDisabledReason(), leakedID)
	}
	for _, id := range []int64{own.GetEndpointId(), byOtherKey.GetEndpointId(), confirmed.GetEndpointId()} {
		require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_ACTIVE, endpointOf(t, p.account, id).GetStatus())
	}

	// The partner's next sale is cancelled: its own endpoint hears of it,
	// the leaked URL does not, and nothing is queued for it.
	show := freeShow(t, env, 2)
	order := book(t, env, show, 1)
	setPartner(t, env, show, order, p.id)
	cancel(t, env, order)
	require.Eventually(t, func() bool { return len(tries(partnerSide, "order.cancelled", order)) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Empty(t, attacker.all())
	require.Empty(t, deliveries(t, as(t, env, admin), stolen.GetEndpointId()))

	require.Equal(t, []string{
		"webhook_endpoint.create by api_key:" + leakedID,
		"webhook_endpoint.disable by user:" + p.user,
	}, auditOf(t, env, stolen.GetEndpointId()))
	entries, err := audit.Read(ctx, env.App.Router.Catalog(), audit.Filter{Target: "api_key:" + leakedID})
	require.NoError(t, err)
	require.Len(t, entries, 1, "the revocation, once")
	require.Equal(t, "api_key.revoke", entries[0].Action)
	require.Equal(t, audit.Actor{Kind: audit.ActorUser, ID: p.user}, entries[0].Actor)
}

// message is an event of partner for Enqueue.
func message(id string, partner int64, at time.Time) webhook.Message {
	return webhook.Message{EventID: id, Type: "order.cancelled", OccurredAt: at, PartnerID: partner,
		Body: []byte(`{"type":"order.cancelled","event_id":"` + id + `"}`)}
}

func statuses(t *testing.T, c api, endpoint int64) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range deliveries(t, c, endpoint) {
		out[d.GetEventId()] = strings.TrimPrefix(d.GetStatus().String(), "DELIVERY_STATUS_")
	}
	return out
}

// TestDisabledEndpointGetsNothing (issue 22 §3, decision 0277): an
// endpoint its partner disables has its pending deliveries dropped, the
// log saying why, and no event is queued for it any more, while its
// partner's other endpoint still gets them.
func TestDisabledEndpointGetsNothing(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	failing := newReceiver(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	ok := newReceiver(t, nil)
	p1 := as(t, env, partner1)
	off := createEndpoint(t, p1, failing.URL, 0, "order.cancelled").GetEndpoint().GetEndpointId()
	on := createEndpoint(t, p1, ok.URL, 0, "order.cancelled").GetEndpoint().GetEndpointId()

	n, err := env.App.Webhooks.Enqueue(ctx, []webhook.Message{message("evt-1", 1, time.Now()), message("evt-2", 1, time.Now())})
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Eventually(t, func() bool { return len(failing.all()) >= 2 }, 30*time.Second, 20*time.Millisecond, "tried and failed")
	require.Equal(t, map[string]string{"evt-1": "PENDING", "evt-2": "PENDING"}, statuses(t, p1, off))

	resp, err := p1.hooks.DisableEndpoint(ctx, connect.NewRequest(&partnerv1.DisableEndpointRequest{EndpointId: off, Reason: "moving servers"}))
	require.NoError(t, err)
	require.Equal(t, int32(2), resp.Msg.GetDropped())
	require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_PARTNER, resp.Msg.GetEndpoint().GetDisabledBy())
	require.Equal(t, map[string]string{"evt-1": "DROPPED", "evt-2": "DROPPED"}, statuses(t, p1, off))
	for _, d := range deliveries(t, p1, off) {
		require.Contains(t, d.GetDroppedReason(), "disabled by the partner (moving servers)")
		require.Nil(t, d.GetNextAttemptAt())
	}

	n, err = env.App.Webhooks.Enqueue(ctx, []webhook.Message{message("evt-3", 1, time.Now())})
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the active endpoint")
	require.Len(t, deliveries(t, p1, off), 2)
	require.Eventually(t, func() bool { return len(ok.ids()) == 3 }, 30*time.Second, 20*time.Millisecond)
	require.Len(t, deliveries(t, p1, on), 3)
	tried := len(failing.all())
	// Enabled again, it gets what occurs from then on, nothing dropped.
	_, err = p1.hooks.EnableEndpoint(ctx, connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: off}))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"evt-1": "DROPPED", "evt-2": "DROPPED"}, statuses(t, p1, off))
	require.Equal(t, tried, len(failing.all()))
	require.Equal(t, []string{
		"webhook_endpoint.create by user:agency-1",
		"webhook_endpoint.disable by user:agency-1",
		"webhook_endpoint.enable by user:agency-1",
	}, auditOf(t, env, off))
}

// TestEndpointDisabledAfterFailuresKeepsEventsForRetry (issue 22 §3,
// decision 0277), on a fake clock: an endpoint the worker disabled after
// failures keeps getting its events queued; enabled again it receives
// those recorded within Retry, and those kept longer are dropped, by the
// pruner or at the enable, and counted.
func TestEndpointDisabledAfterFailuresKeepsEventsForRetry(t *testing.T) {
	t0 := time.Now().UTC()
	clk := clock.NewFake(t0)
	w := webhook.WorkerConfig{AllowLoopback: true, Poll: 10 * time.Millisecond, DisableFailures: 2, DisableAfter: time.Minute}
	env := apptest.New(t, apptest.Options{Shards: 1, Webhooks: &w, Clock: clk})
	ctx := context.Background()
	var down atomic.Bool
	down.Store(true)
	rc := newReceiver(t, func(int, *http.Request) int {
		if down.Load() {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	p1 := as(t, env, partner1)
	id := createEndpoint(t, p1, rc.URL, 0, "order.cancelled").GetEndpoint().GetEndpointId()
	enqueue := func(event string) {
		t.Helper()
		n, err := env.App.Webhooks.Enqueue(ctx, []webhook.Message{message(event, 1, clk.Now())})
		require.NoError(t, err)
		require.Equal(t, 1, n, "queued for the endpoint")
	}
	endpoint := func() *partnerv1.WebhookEndpoint {
		list, err := p1.hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
		require.NoError(t, err)
		return list.Msg.GetEndpoints()[0]
	}

	enqueue("old") // given up with the retention at t0+72h
	require.Eventually(t, func() bool { return len(rc.all()) == 1 }, 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { // the first failure recorded
		d := deliveries(t, p1, id)
		return len(d) == 1 && len(d[0].GetRecentAttempts()) == 1
	}, 30*time.Second, 10*time.Millisecond)
	clk.Advance(time.Hour) // the second failure, an hour after the first: disabled
	require.Eventually(t, func() bool {
		return endpoint().GetStatus() == partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_FAILURES, endpoint().GetDisabledBy())
	enqueue("mid") // kept until t0+73h
	clk.Set(t0.Add(webhook.Retry + 30*time.Minute))
	enqueue("new") // kept until t0+144.5h

	// The pruner drops what was kept past Retry, and counts it.
	n, err := env.App.WebhookWorker.DropExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, map[string]string{"old": "DROPPED", "mid": "PENDING", "new": "PENDING"}, statuses(t, p1, id))
	for _, d := range deliveries(t, p1, id) {
		if d.GetEventId() == "old" {
			require.Contains(t, d.GetDroppedReason(), "retention")
		}
	}

	// Back up and enabled at t0+74h: "mid" is past its retention now and
	// dropped at the enable; "new" goes out.
	clk.Set(t0.Add(webhook.Retry + 2*time.Hour))
	down.Store(false)
	_, err = p1.hooks.EnableEndpoint(ctx, connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: id}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return statuses(t, p1, id)["new"] == "SUCCEEDED" }, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, map[string]string{"old": "DROPPED", "mid": "DROPPED", "new": "SUCCEEDED"}, statuses(t, p1, id))
	var sent []string
	for _, g := range rc.all() {
		sent = append(sent, g.event.EventID)
	}
	require.Equal(t, []string{"old", "old", "new"}, sent, "two failed attempts, then the event kept within the retention")

	resp, err := http.Get(env.AdminURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	metrics, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(metrics), `seatghor_webhook_deliveries_dropped_total{reason="retention"} 2`)
	require.Equal(t, []string{
		"webhook_endpoint.create by user:agency-1",
		"webhook_endpoint.disable by system:webhook-worker",
		"webhook_endpoint.enable by user:agency-1",
	}, auditOf(t, env, id))
}

// TestEndpointCapPerPartner (issue 22 §2, decision 0278): ten creates at
// once for one partner make exactly its cap of endpoints, the rest are
// refused failed_precondition; disabled endpoints count, a deleted one
// frees its place; admins' endpoints and other partners are not held by
// it; the cap is the service's setting.
func TestEndpointCapPerPartner(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	p1 := as(t, env, partner1)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []int64
		refused []string
	)
	for i := range 10 {
		wg.Go(func() {
			resp, err := p1.hooks.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
				Url: fmt.Sprintf("https://agency-1.example/%d", i), EventTypes: []string{"order.cancelled"}}))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, reasonOf(t, err))
				return
			}
			created = append(created, resp.Msg.GetEndpoint().GetEndpointId())
		})
	}
	wg.Wait()
	require.Len(t, created, webhook.DefaultMaxEndpoints)
	require.Len(t, refused, 10-webhook.DefaultMaxEndpoints)
	for _, r := range refused {
		require.Equal(t, "failed_precondition WEBHOOK_ENDPOINT_LIMIT", r)
	}
	var stored int
	require.NoError(t, env.App.Router.Catalog().QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE partner_id = 1`).Scan(&stored))
	require.Equal(t, webhook.DefaultMaxEndpoints, stored)

	_, err := p1.hooks.DisableEndpoint(ctx, connect.NewRequest(&partnerv1.DisableEndpointRequest{EndpointId: created[0]}))
	require.NoError(t, err)
	_, err = p1.hooks.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
		Url: "https://agency-1.example/again", EventTypes: []string{"order.cancelled"}}))
	require.Equal(t, "failed_precondition WEBHOOK_ENDPOINT_LIMIT", reasonOf(t, err), "a disabled endpoint still counts")
	_, err = p1.hooks.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: created[0]}))
	require.NoError(t, err)
	createEndpoint(t, p1, "https://agency-1.example/again", 0, "order.cancelled")
	createEndpoint(t, as(t, env, partner2), "https://agency-2.example/", 0, "order.cancelled")
	createEndpoint(t, as(t, env, admin), "https://ops.example/", 0, "order.cancelled")

	two := webhook.NewService(env.App.Router.Catalog(), clock.Real{}, env.App.Seal, true, webhook.WithMaxEndpoints(2))
	caller := webhook.Caller{UserID: "agency-3", PartnerID: 3, Manages: true}
	for i := range 3 {
		_, err := two.CreateEndpoint(ctx, caller, webhook.NewEndpoint{URL: fmt.Sprintf("https://agency-3.example/%d", i),
			EventTypes: []string{"order.cancelled"}})
		if i < 2 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, webhook.ErrEndpointLimit)
		}
	}
}
