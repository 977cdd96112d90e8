package sandbox_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

func refundReq(key, chargeID string, amount int64) gateway.RefundRequest {
	return gateway.RefundRequest{IdempotencyKey: key, Reference: "rf-" + key, ChargeID: chargeID, AmountMinor: amount, Currency: "BDT"}
}

func TestRefund(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	c, err := e.client.Charge(ctx(t), chargeReq("key-c", "pay-c", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)

	r1, err := e.client.Refund(ctx(t), refundReq("rk-1", c.ID, 4000))
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, r1.Status)
	require.Equal(t, c.ID, r1.ChargeID)
	require.Equal(t, int64(4000), r1.AmountMinor)

	// a retried refund with its key is the same refund.
	again, err := e.client.Refund(ctx(t), refundReq("rk-1", c.ID, 4000))
	require.NoError(t, err)
	require.Equal(t, r1, again)
	got, err := e.client.GetRefund(ctx(t), "rk-1")
	require.NoError(t, err)
	require.Equal(t, r1, got)

	// Only 6000 is left.
	_, err = e.client.Refund(ctx(t), refundReq("rk-2", c.ID, 6001))
	require.ErrorIs(t, err, gateway.ErrRejected)
	var apiErr *sandbox.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "amount_exceeds_refundable", apiErr.Code)
	_, err = e.client.GetRefund(ctx(t), "rk-2")
	require.ErrorIs(t, err, gateway.ErrNotFound, "a rejected refund leaves nothing behind")

	_, err = e.client.Refund(ctx(t), refundReq("rk-3", c.ID, 6000))
	require.NoError(t, err)
	_, err = e.client.Refund(ctx(t), refundReq("rk-4", c.ID, 1))
	require.ErrorIs(t, err, gateway.ErrRejected, "fully refunded")

	charge, err := e.client.GetCharge(ctx(t), "key-c")
	require.NoError(t, err)
	require.Equal(t, int64(10000), charge.RefundedMinor)
	require.Len(t, e.gw.Refunds(), 2)

	// A refund of nothing that exists, or of a failed charge.
	_, err = e.client.Refund(ctx(t), refundReq("rk-5", "ch_missing", 1))
	require.ErrorIs(t, err, gateway.ErrNotFound)
	failed, err := e.client.Charge(ctx(t), chargeReq("key-f", "pay-f", 10000, sandbox.TokenDecline))
	require.NoError(t, err)
	_, err = e.client.Refund(ctx(t), refundReq("rk-6", failed.ID, 1))
	require.ErrorIs(t, err, gateway.ErrRejected)
	_, err = e.client.Refund(ctx(t), gateway.RefundRequest{IdempotencyKey: "rk-7", Reference: "x", ChargeID: c.ID, AmountMinor: 1, Currency: "USD"})
	require.ErrorIs(t, err, gateway.ErrRejected)

	e.settle(t)
	var refunds int
	for _, ev := range e.hook.events() {
		if ev.Type == gateway.EventRefundSucceeded {
			refunds++
			require.NotNil(t, ev.Refund)
			require.Equal(t, c.ID, ev.Refund.ChargeID)
		}
	}
	require.Equal(t, 2, refunds)
}

func TestSettlementReport(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	// No webhooks: they would be signed with the fake time.
	e := newEnv(t, envOpts{noWebhooks: true, cfg: sandbox.Config{Now: clk.Now}})

	a, err := e.client.Charge(ctx(t), chargeReq("key-a", "pay-a", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)
	_, err = e.client.Charge(ctx(t), chargeReq("key-f", "pay-f", 10000, sandbox.TokenDecline))
	require.NoError(t, err)
	clk.Set(t0.Add(time.Hour)) // exactly the end of the first window
	b, err := e.client.Charge(ctx(t), chargeReq("key-b", "pay-b", 20000, sandbox.TokenSuccess))
	require.NoError(t, err)
	clk.Set(t0.Add(2 * time.Hour))
	rf, err := e.client.Refund(ctx(t), refundReq("rk-a", a.ID, 10000))
	require.NoError(t, err)

	first, err := e.client.Report(ctx(t), t0, t0.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, first.From.Equal(t0))
	require.Len(t, first.Charges, 1, "[from, to): the end is exclusive, failed charges are not settled")
	require.Equal(t, a.ID, first.Charges[0].ID)
	require.Equal(t, int64(175), first.Charges[0].FeeMinor)
	require.Empty(t, first.Refunds)

	all, err := e.client.Report(ctx(t), t0, t0.Add(3*time.Hour))
	require.NoError(t, err)
	require.Len(t, all.Charges, 2)
	require.Equal(t, b.ID, all.Charges[1].ID)
	require.Equal(t, int64(350), all.Charges[1].FeeMinor)
	require.Len(t, all.Refunds, 1)
	require.Equal(t, rf.ID, all.Refunds[0].ID)

	later, err := e.client.Report(ctx(t), t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	require.NoError(t, err)
	require.Empty(t, later.Charges)
	require.Len(t, later.Refunds, 1)

	_, err = e.client.Report(ctx(t), t0.Add(time.Hour), t0)
	require.ErrorIs(t, err, gateway.ErrRejected)
}
