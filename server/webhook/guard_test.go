package webhook

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

// TestGuardRefusesTheNetworkInside: the sender connects only to public
// addresses (decision 0190), loopback only when dev or tests allow it.
func TestGuardRefusesTheNetworkInside(t *testing.T) {
	for _, tc := range []struct {
		addr          string
		allowLoopback bool
		ok            bool
	}{
		{"93.184.215.14:443", false, true},
		{"[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", false, true},
		{"127.0.0.1:8080", false, false},
		{"127.0.0.1:8080", true, true},
		{"[::1]:8080", true, true},
		{"[::1]:8080", false, false},
		{"10.1.2.3:443", true, false},
		{"192.168.0.10:443", true, false},
		{"172.16.5.4:443", false, false},
		{"169.254.169.254:80", true, false}, // a cloud's metadata service
		{"[fe80::1]:443", false, false},
		{"[fd00::1]:443", false, false},
		{"[::ffff:10.0.0.1]:443", false, false},
		{"0.0.0.0:443", true, false},
	} {
		err := guard(tc.allowLoopback)("tcp", tc.addr, nil)
		if tc.ok {
			require.NoError(t, err, tc.addr)
		} else {
			require.ErrorIs(t, err, errAddress, "%s (loopback allowed: %v)", tc.addr, tc.allowLoopback)
		}
	}
}

// TestSignIsStandardWebhooks: what Sign writes, the specification's own
// library verifies, with either secret of a rotation.
func TestSignIsStandardWebhooks(t *testing.T) {
	oldSecret, newSecret := newSecret(), newSecret()
	body := []byte(`{"type":"booking.confirmed","data":{"order_id":"ord_1"}}`)
	now := time.Now()
	sig, err := Sign([]string{newSecret, oldSecret}, "msg_1", now, body)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	for _, s := range []string{oldSecret, newSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, h))
		require.True(t, errors.Is(wh.Verify(append(body, ' '), h), standardwebhooks.ErrNoMatchingSignature), "a changed body fails")
	}
	_, err = Sign([]string{"whsec_not base64"}, "msg_1", now, body)
	require.Error(t, err)
}

// TestBackoffGrowsWithJitterUpToItsCap: the n-th retry waits between half
// and all of base·2^(n-1), capped.
func TestBackoffGrowsWithJitterUpToItsCap(t *testing.T) {
	w := &Worker{cfg: WorkerConfig{RetryBase: 5 * time.Second, RetryMax: 2 * time.Hour}}
	for n, full := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 5: 80 * time.Second, 12: 2 * time.Hour, 40: 2 * time.Hour} {
		for range 200 {
			d := w.backoff(n)
			require.True(t, d >= full/2 && d <= full, "attempt %d waits %s, want %s…%s", n, d, full/2, full)
		}
	}
}
