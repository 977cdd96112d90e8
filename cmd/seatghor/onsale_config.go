package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/waitingroom"
)

// onSaleConfig is the on-sale day's settings: the waiting rooms' admission
// controller and the per-caller rate limits. Both need
// Redis (SEATGHOR_REDIS_URL; dev always has one).
type onSaleConfig struct {
	WaitingRoom waitingroom.Config
	Limits      ratelimit.Config
}

func loadOnSaleConfig(getenv func(string) string) (onSaleConfig, error) {
	c := onSaleConfig{Limits: ratelimit.Defaults()}
	if v := getenv("SEATGHOR_RATE_LIMITS"); v != "" {
		if v != "off" {
			return c, fmt.Errorf("SEATGHOR_RATE_LIMITS=%q: only \"off\" (set the SEATGHOR_RATE_* one by one)", v)
		}
		c.Limits = ratelimit.Config{}
	}
	for name, l := range map[string]*ratelimit.Limit{
		"SEATGHOR_RATE_HOLDS":            &c.Limits.Holds,
		"SEATGHOR_RATE_PARTNER_HOLDS":    &c.Limits.PartnerHolds,
		"SEATGHOR_RATE_SALE_HOLDS":       &c.Limits.SaleHolds,
		"SEATGHOR_RATE_PAYMENTS":         &c.Limits.Payments,
		"SEATGHOR_RATE_PARTNER_PAYMENTS": &c.Limits.PartnerPayments,
		"SEATGHOR_RATE_JOINS":            &c.Limits.Joins,
	} {
		if v := getenv(name); v != "" {
			parsed, err := ratelimit.ParseLimit(v)
			if err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
			*l = parsed
		}
	}
	ctl := &c.WaitingRoom.Controller
	if v := getenv("SEATGHOR_QUEUE_TARGET_P99"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SEATGHOR_QUEUE_TARGET_P99=%q: want a positive duration such as 250ms", v)
		}
		ctl.TargetP99 = d
	}
	if v := getenv("SEATGHOR_QUEUE_MAX_ERROR_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			return c, fmt.Errorf("SEATGHOR_QUEUE_MAX_ERROR_RATE=%q: want a share between 0 and 1, such as 0.01", v)
		}
		ctl.MaxErrorRate = f
	}
	if v := getenv("SEATGHOR_QUEUE_POLL_MAX"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return c, fmt.Errorf("SEATGHOR_QUEUE_POLL_MAX=%q: want a duration of at least 1s", v)
		}
		c.WaitingRoom.PollMax = d
	}
	return c, nil
}
