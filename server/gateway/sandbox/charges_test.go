package sandbox_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

func TestChargeIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})

	first, err := e.client.Charge(ctx(t), chargeReq("key-1", "pay-1", 150000, sandbox.TokenSuccess))
	require.NoError(t, err)
	again, err := e.client.Charge(ctx(t), chargeReq("key-1", "pay-1", 150000, sandbox.TokenSuccess))
	require.NoError(t, err)
	require.Equal(t, first, again, "R-6.1: the same key answers the same charge")
	require.Len(t, e.gw.Charges(), 1)

	// The same key for another operation is a caller bug, refused.
	_, err = e.client.Charge(ctx(t), chargeReq("key-1", "pay-1", 999, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrRejected)
	var apiErr *sandbox.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
	require.Equal(t, "idempotency_key_reused", apiErr.Code)
	_, err = e.client.Charge(ctx(t), chargeReq("key-1", "pay-other", 150000, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrRejected)
	require.Len(t, e.gw.Charges(), 1)

	e.settle(t)
	require.Len(t, e.hook.events(), 1, "one charge, one webhook")
}

func TestChargeConcurrentSameKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})

	const n = 20
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			c, err := e.client.Charge(ctx(t), chargeReq("key-tap-twice", "pay-1", 50000, sandbox.TokenSuccess))
			ids[i], errs[i] = c.ID, err
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, ids[0], ids[i])
	}
	require.Len(t, e.gw.Charges(), 1, "20 taps with one key are one charge")
	e.settle(t)
	require.Len(t, e.hook.events(), 1)
}

func TestChargeTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{cfg: sandbox.Config{FeeFixedMinor: 100}})

	tests := []struct {
		token       string
		wantStatus  gateway.Status
		wantFailure string
		wantFee     int64
	}{
		// 1.75 % of 100000 is 1750, plus the fixed 100.
		{token: sandbox.TokenSuccess, wantStatus: gateway.StatusSucceeded, wantFee: 1850},
		{token: "tok_visa_4242", wantStatus: gateway.StatusSucceeded, wantFee: 1850},
		// a decline is an answer, not an error.
		{token: sandbox.TokenDecline, wantStatus: gateway.StatusFailed, wantFailure: "declined"},
		{token: sandbox.TokenInsufficientFunds, wantStatus: gateway.StatusFailed, wantFailure: "insufficient_funds"},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			t.Parallel()
			key, ref := "key-"+tt.token, "pay-"+tt.token
			c, err := e.client.Charge(ctx(t), chargeReq(key, ref, 100000, tt.token))
			require.NoError(t, err)
			require.Equal(t, tt.wantStatus, c.Status)
			require.Equal(t, tt.wantFailure, c.FailureCode)
			require.Equal(t, tt.wantFee, c.FeeMinor)
			require.Equal(t, key, c.IdempotencyKey)
			require.Equal(t, ref, c.Reference)
			require.Equal(t, int64(100000), c.AmountMinor)
			require.Equal(t, "BDT", c.Currency)
			require.False(t, c.CreatedAt.IsZero())
			require.Equal(t, tt.wantStatus == gateway.StatusSucceeded, !c.CapturedAt.IsZero())

			got, err := e.client.GetCharge(ctx(t), key)
			require.NoError(t, err)
			require.Equal(t, c, got)
		})
	}
}

func TestChargeDuplicateCapture(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})

	c, err := e.client.Charge(ctx(t), chargeReq("key-dup", "pay-dup", 70000, sandbox.TokenDuplicateCapture))
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, c.Status)

	// The caller saw one charge; the gateway holds two. Only a search by
	// reference (or the settlement report) shows it.
	found, err := e.client.FindCharges(ctx(t), "pay-dup")
	require.NoError(t, err)
	require.Len(t, found, 2)
	require.Equal(t, c.ID, found[0].ID)
	require.NotEqual(t, found[0].ID, found[1].ID)
	for _, f := range found {
		require.Equal(t, gateway.StatusSucceeded, f.Status)
		require.Equal(t, int64(70000), f.AmountMinor)
	}
	require.Len(t, e.gw.ChargesFor("pay-dup"), 2)

	none, err := e.client.FindCharges(ctx(t), "pay-nobody")
	require.NoError(t, err)
	require.Empty(t, none)

	e.settle(t)
	require.Len(t, e.hook.events(), 2, "each capture has its webhook")
}

func TestChargeWebhookOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{cfg: sandbox.Config{WebhookOnlyDelay: 50 * time.Millisecond}})

	c, err := e.client.Charge(ctx(t), chargeReq("key-wo", "pay-wo", 20000, sandbox.TokenWebhookOnly))
	require.NoError(t, err)
	require.Equal(t, gateway.StatusPending, c.Status)
	require.Empty(t, c.RedirectURL)

	require.Eventually(t, func() bool { return len(e.hook.events()) == 1 }, 5*time.Second, 5*time.Millisecond)
	ev := e.hook.events()[0]
	require.Equal(t, gateway.EventChargeSucceeded, ev.Type)
	require.Equal(t, c.ID, ev.Charge.ID)

	got, err := e.client.GetCharge(ctx(t), "key-wo")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, got.Status)
	require.Equal(t, int64(350), got.FeeMinor)
}

// timeoutOpts makes the client give up before the sandbox's hang ends, as
// a production client with a deadline does.
var timeoutOpts = envOpts{
	cfg:    sandbox.Config{Faults: sandbox.Faults{HangFor: 50 * time.Millisecond}},
	client: sandbox.ClientConfig{Timeout: 30 * time.Millisecond},
}

func TestChargeTimeoutApplied(t *testing.T) {
	t.Parallel()
	for _, hang := range []time.Duration{50 * time.Millisecond, 0} {
		t.Run(fmt.Sprint("hang ", hang), func(t *testing.T) {
			t.Parallel()
			o := timeoutOpts
			o.cfg.Faults.HangFor = hang
			e := newEnv(t, o)
			// Warm a keep-alive connection, so the dropped one is reused:
			// net/http must not silently resend the request.
			_, err := e.client.Charge(ctx(t), chargeReq("key-warm", "pay-warm", 100, sandbox.TokenSuccess))
			require.NoError(t, err)

			_, err = e.client.Charge(ctx(t), chargeReq("key-ta", "pay-ta", 30000, sandbox.TokenTimeoutApplied))
			require.ErrorIs(t, err, gateway.ErrOutcomeUnknown, "R-6.2: a timeout is UNKNOWN, never FAILED")
			require.NotErrorIs(t, err, gateway.ErrRejected)

			// The status query tells the truth: it was captured.
			got, err := e.client.GetCharge(ctx(t), "key-ta")
			require.NoError(t, err)
			require.Equal(t, gateway.StatusSucceeded, got.Status)

			// A retry with the key answers the same charge; still one charge.
			again, err := e.client.Charge(ctx(t), chargeReq("key-ta", "pay-ta", 30000, sandbox.TokenTimeoutApplied))
			require.NoError(t, err)
			require.Equal(t, got.ID, again.ID)
			require.Len(t, e.gw.ChargesFor("pay-ta"), 1)
		})
	}
}

func TestChargeTimeoutNotApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t, timeoutOpts)

	_, err := e.client.Charge(ctx(t), chargeReq("key-tn", "pay-tn", 30000, sandbox.TokenTimeoutNotApplied))
	require.ErrorIs(t, err, gateway.ErrOutcomeUnknown)

	_, err = e.client.GetCharge(ctx(t), "key-tn")
	require.ErrorIs(t, err, gateway.ErrNotFound, "nothing was recorded")
	require.Empty(t, e.gw.Charges())

	// The retry with the same key is processed once.
	c, err := e.client.Charge(ctx(t), chargeReq("key-tn", "pay-tn", 30000, sandbox.TokenTimeoutNotApplied))
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, c.Status)
	require.Len(t, e.gw.Charges(), 1)
}

func TestChargeTimeoutAgainForExistingKey(t *testing.T) {
	t.Parallel()
	o := timeoutOpts
	o.cfg.Faults = sandbox.Faults{Seed: 1, TimeoutRate: 1, AppliedIfTimeout: 1, HangFor: 50 * time.Millisecond}
	e := newEnv(t, o)

	for range 3 {
		_, err := e.client.Charge(ctx(t), chargeReq("key-slow", "pay-slow", 1000, sandbox.TokenSuccess))
		require.ErrorIs(t, err, gateway.ErrOutcomeUnknown, "a replay that times out still answers nothing")
	}
	require.Len(t, e.gw.Charges(), 1, "applied once, whatever the retries")

	e.gw.SetFaults(sandbox.Faults{})
	c, err := e.client.Charge(ctx(t), chargeReq("key-slow", "pay-slow", 1000, sandbox.TokenSuccess))
	require.NoError(t, err)
	require.Equal(t, e.gw.Charges()[0].ID, c.ID, "a later request answers the first result")
}

// timeouts makes n charges with distinct keys and references and returns
// which ones timed out, and the number of charges the sandbox holds.
func timeouts(t *testing.T, f sandbox.Faults, n int) (timedOut []int, charges int) {
	t.Helper()
	// The client waits long enough that only a hang of the fault times
	// out: at 30 ms a busy machine's first request timed out by itself.
	o := envOpts{noWebhooks: true, cfg: sandbox.Config{Faults: f}, client: sandbox.ClientConfig{Timeout: faultTimeout}}
	e := newEnv(t, o)
	for i := 1; i <= n; i++ {
		_, err := e.client.Charge(ctx(t), chargeReq(fmt.Sprintf("key-%d", i), fmt.Sprintf("order-%d", i), 1000, sandbox.TokenSuccess))
		switch {
		case errors.Is(err, gateway.ErrOutcomeUnknown):
			timedOut = append(timedOut, i)
		default:
			require.NoError(t, err)
		}
	}
	return timedOut, len(e.gw.Charges())
}

// faultTimeout is the client's timeout where the sandbox's hangs are the
// subject.
const faultTimeout = 250 * time.Millisecond

func TestTimeoutFaultsDeterministic(t *testing.T) {
	t.Parallel()
	f := sandbox.Faults{Seed: 7, TimeoutRate: 0.3, AppliedIfTimeout: 0.5}
	gotA, chargesA := timeouts(t, f, 40)
	gotB, chargesB := timeouts(t, f, 40)
	require.Equal(t, gotA, gotB, "same seed, same timeouts")
	require.Equal(t, chargesA, chargesB)
	require.NotEmpty(t, gotA)
	require.Less(t, len(gotA), 40)
	require.Greater(t, chargesA, 40-len(gotA), "some timeouts were applied")
	require.Less(t, chargesA, 40, "some timeouts were not applied")
}

func TestSlowWindowByReferenceOrdinal(t *testing.T) {
	t.Parallel()
	f := sandbox.Faults{SlowWindow: sandbox.SlowWindow{From: 3, To: 5, TimeoutRate: 1}}
	got, _ := timeouts(t, f, 8)
	require.Equal(t, []int{3, 4, 5}, got, "references 3–5 by first-seen order are slow")

	// The ordinal is the reference's, not the request's: a second key for
	// an early reference stays fast, a retry for a slow one stays slow.
	e := newEnv(t, envOpts{noWebhooks: true, cfg: sandbox.Config{Faults: f}, client: sandbox.ClientConfig{Timeout: faultTimeout}})
	for i := 1; i <= 5; i++ {
		_, _ = e.client.Charge(ctx(t), chargeReq(fmt.Sprintf("key-%d", i), fmt.Sprintf("order-%d", i), 1000, sandbox.TokenSuccess))
	}
	_, err := e.client.Charge(ctx(t), chargeReq("key-1b", "order-1", 1000, sandbox.TokenSuccess))
	require.NoError(t, err)
	_, err = e.client.Charge(ctx(t), chargeReq("key-4b", "order-4", 1000, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrOutcomeUnknown)
}

func TestRedirectFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	req := chargeReq("key-r1", "pay-r1", 123456, "")
	req.Method = "mfs"
	req.ReturnURL = "https://seatghor.example/pay/return?order=9"
	c, err := e.client.Charge(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusPending, c.Status)
	require.Equal(t, e.url+"/pay/"+c.ID, c.RedirectURL)

	// The hosted page shows the amount and both buttons.
	resp, err := browser.Get(c.RedirectURL)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), "1234.56 BDT")
	require.Contains(t, string(page), "Approve")
	require.Contains(t, string(page), "Decline")

	resp, err = browser.PostForm(c.RedirectURL+"/approve", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	back, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "seatghor.example", back.Host)
	require.Equal(t, "9", back.Query().Get("order"))
	require.Equal(t, c.ID, back.Query().Get("charge_id"))
	require.Equal(t, "succeeded", back.Query().Get("status"))

	got, err := e.client.GetCharge(ctx(t), "key-r1")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, got.Status)

	// A second click changes nothing and still goes back.
	resp, err = browser.PostForm(c.RedirectURL+"/decline", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	got, err = e.client.GetCharge(ctx(t), "key-r1")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, got.Status)

	// Declined, without a return URL: a plain done page.
	d, err := e.client.Charge(ctx(t), chargeReq("key-r2", "pay-r2", 5000, ""))
	require.NoError(t, err)
	resp, err = browser.PostForm(d.RedirectURL+"/decline", nil)
	require.NoError(t, err)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), "failed")
	got, err = e.client.GetCharge(ctx(t), "key-r2")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusFailed, got.Status)
	require.Equal(t, sandbox.FailureCancelledByBuyer, got.FailureCode)

	resp, err = browser.Get(e.url + "/pay/ch_nope")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	e.settle(t)
	types := []gateway.EventType{}
	for _, ev := range e.hook.events() {
		types = append(types, ev.Type)
	}
	require.ElementsMatch(t, []gateway.EventType{gateway.EventChargeSucceeded, gateway.EventChargeFailed}, types)
}

func TestApproveDeclineFromGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})

	a, err := e.client.Charge(ctx(t), chargeReq("key-a", "pay-a", 10000, ""))
	require.NoError(t, err)
	got, err := e.gw.Approve(a.ID)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, got.Status)
	require.Equal(t, int64(175), got.FeeMinor)
	_, err = e.gw.Approve(a.ID)
	require.ErrorIs(t, err, sandbox.ErrNotPending)
	_, err = e.gw.Decline(a.ID)
	require.ErrorIs(t, err, sandbox.ErrNotPending)

	d, err := e.client.Charge(ctx(t), chargeReq("key-d", "pay-d", 10000, ""))
	require.NoError(t, err)
	got, err = e.gw.Decline(d.ID)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusFailed, got.Status)

	_, err = e.gw.Approve("ch_missing")
	require.ErrorIs(t, err, gateway.ErrNotFound)
}

func TestChargeValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{noWebhooks: true})

	_, err := e.client.Charge(ctx(t), chargeReq("", "pay-1", 100, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrRejected, "R-6.1: no key, no call")

	for name, req := range map[string]gateway.ChargeRequest{
		"no reference":   chargeReq("k1", "", 100, sandbox.TokenSuccess),
		"zero amount":    chargeReq("k2", "p", 0, sandbox.TokenSuccess),
		"bad currency":   {IdempotencyKey: "k3", Reference: "p", AmountMinor: 1, Currency: "taka"},
		"unknown method": {IdempotencyKey: "k4", Reference: "p", AmountMinor: 1, Currency: "BDT", Method: "cash"},
	} {
		_, err := e.client.Charge(ctx(t), req)
		require.ErrorIs(t, err, gateway.ErrRejected, name)
	}

	// Straight over HTTP: the sandbox itself refuses a charge without a key.
	resp, err := http.Post(e.url+"/v1/charges", "application/json",
		strings.NewReader(`{"reference":"p","amount_minor":100,"currency":"BDT","token":"tok_success"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Empty(t, e.gw.Charges())
}
