package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/ratelimit"
)

func TestOnSaleConfig(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	c, err := loadOnSaleConfig(env(nil))
	require.NoError(t, err)
	require.Equal(t, ratelimit.Defaults(), c.Limits, "limits are on by default")

	c, err = loadOnSaleConfig(env(map[string]string{
		"SEATGHOR_RATE_HOLDS": "5/10s,2", "SEATGHOR_RATE_PAYMENTS": "off", "SEATGHOR_QUEUE_TARGET_P99": "100ms",
		"SEATGHOR_QUEUE_MAX_ERROR_RATE": "0.05", "SEATGHOR_QUEUE_POLL_MAX": "30s",
	}))
	require.NoError(t, err)
	require.Equal(t, ratelimit.Limit{Rate: 5, Per: 10 * time.Second, Burst: 2}, c.Limits.Holds)
	require.True(t, c.Limits.Payments.Off())
	require.Equal(t, 100*time.Millisecond, c.WaitingRoom.Controller.TargetP99)
	require.Equal(t, 0.05, c.WaitingRoom.Controller.MaxErrorRate)
	require.Equal(t, 30*time.Second, c.WaitingRoom.PollMax)

	c, err = loadOnSaleConfig(env(map[string]string{"SEATGHOR_RATE_LIMITS": "off"}))
	require.NoError(t, err)
	require.Equal(t, ratelimit.Config{}, c.Limits)

	for k, v := range map[string]string{
		"SEATGHOR_RATE_HOLDS": "lots", "SEATGHOR_RATE_LIMITS": "on", "SEATGHOR_QUEUE_TARGET_P99": "-1s",
		"SEATGHOR_QUEUE_MAX_ERROR_RATE": "2", "SEATGHOR_QUEUE_POLL_MAX": "10ms",
	} {
		_, err := loadOnSaleConfig(env(map[string]string{k: v}))
		require.Error(t, err, "%s=%s", k, v)
	}
}
