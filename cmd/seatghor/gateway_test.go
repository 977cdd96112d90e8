package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

func TestParseFaults(t *testing.T) {
	f, err := parseFaults("seed=7,timeout=0.03,slow=1001-1200:0.5,applied=0.6,dup=0.02,dup_max=3,drop=0.01,delay=2s,hang=1s," +
		"reorder=0.05,reorder_delay=3s")
	require.NoError(t, err)
	require.Equal(t, sandbox.Faults{
		Seed: 7, TimeoutRate: 0.03, SlowWindow: sandbox.SlowWindow{From: 1001, To: 1200, TimeoutRate: 0.5},
		AppliedIfTimeout: 0.6, DuplicateRate: 0.02, DuplicateMax: 3, DropRate: 0.01, DelayMax: 2 * time.Second, HangFor: time.Second,
		ReorderRate: 0.05, ReorderDelay: 3 * time.Second,
	}, f)
	for _, bad := range []string{"timeout", "timeout=2", "slow=1-2", "slow=a-b:0.5", "seed=-1", "delay=soon", "colour=red",
		"dup_max=1", "dup_max=9", "reorder=2", "reorder_delay=later"} {
		_, err := parseFaults(bad)
		require.Error(t, err, bad)
	}
}

// TestGatewayCommand: `seatghor gateway` serves the sandbox on its own, with
// the faults of SEATGHOR_SANDBOX_FAULTS.
func TestGatewayCommand(t *testing.T) {
	addr := freeAddr(t)
	t.Setenv("SEATGHOR_SANDBOX_ADDR", addr)
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "whsec_cmd")
	t.Setenv("SEATGHOR_SANDBOX_FAULTS", "seed=1,timeout=1,applied=1")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- run(ctx, []string{"gateway", "--webhook-url", "http://127.0.0.1:1/webhooks/sandbox"}, &out, &out)
	}()
	client, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: "http://" + addr, WebhookSecrets: []string{"whsec_cmd"},
		Timeout: 2 * time.Second})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := client.FindCharges(ctx, "nothing")
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)

	// Every request times out (timeout=1), but is applied (applied=1).
	req := gateway.ChargeRequest{IdempotencyKey: "k1", Reference: "pay_1_x", AmountMinor: 100, Currency: "BDT",
		Method: "card", Token: "tok_success"}
	_, err = client.Charge(ctx, req)
	require.ErrorIs(t, err, gateway.ErrOutcomeUnknown)
	got, err := client.GetCharge(ctx, "k1")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, got.Status)

	stop()
	require.NoError(t, <-done)
}
