// Package ratelimit meets bots and abuse with per-caller limits (R-9.6,
// holds and payment attempts per caller, per partner key and per
// caller and sale, counted with GCRA in Redis (one script checks all of a
// call's limits, gcra.go) so every API process shares one count. A refused call gets
// resource_exhausted with a google.rpc.RetryInfo detail and a Retry-After
// header. The limits are configuration (SEATGHOR_RATE_*), not code.
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit allows Rate calls per Per, with bursts of up to Burst. The zero
// Limit is off.
type Limit struct {
	Rate  int
	Per   time.Duration
	Burst int
}

// Off tells whether the limit is disabled.
func (l Limit) Off() bool { return l.Rate <= 0 || l.Per <= 0 }

func (l Limit) String() string {
	if l.Off() {
		return "off"
	}
	return fmt.Sprintf("%d/%s,%d", l.Rate, l.Per, l.Burst)
}

// ParseLimit reads "RATE/PERIOD[,BURST]" (e.g. "20/1m,10": 20 a minute,
// bursts of 10; the burst defaults to the rate) or "off".
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Limit{}, nil
	}
	spec, burst, hasBurst := strings.Cut(s, ",")
	rate, per, ok := strings.Cut(spec, "/")
	if !ok {
		return Limit{}, fmt.Errorf("rate limit %q: want RATE/PERIOD[,BURST], e.g. 20/1m,10, or off", s)
	}
	var l Limit
	var err error
	if l.Rate, err = strconv.Atoi(strings.TrimSpace(rate)); err != nil || l.Rate < 1 {
		return Limit{}, fmt.Errorf("rate limit %q: the rate must be a positive number", s)
	}
	per = strings.TrimSpace(per)
	if per != "" && (per[0] < '0' || per[0] > '9') {
		per = "1" + per // "20/m" means 20 a minute
	}
	if l.Per, err = time.ParseDuration(per); err != nil || l.Per <= 0 {
		return Limit{}, fmt.Errorf("rate limit %q: the period must be a duration such as 1m", s)
	}
	l.Burst = l.Rate
	if hasBurst {
		if l.Burst, err = strconv.Atoi(strings.TrimSpace(burst)); err != nil || l.Burst < 1 {
			return Limit{}, fmt.Errorf("rate limit %q: the burst must be a positive number", s)
		}
	}
	return l, nil
}

// Config is every limit. A zero Config limits nothing.
type Config struct {
	// Holds: CreateHold per caller (users, operators, admins).
	Holds Limit
	// PartnerHolds: CreateHold per partner (callers with the partner role,
	// who book for many buyers; all the partner's keys share one count).
	PartnerHolds Limit
	// SaleHolds: CreateHold per caller and sale (a show, or the shows that
	// share a waiting room) — a cap on one account's tries in one sale,
	// whatever its overall rate (partners excepted).
	SaleHolds Limit
	// Payments: StartPayment per caller (R-10: rate limits on payment
	// attempts).
	Payments Limit
	// PartnerPayments: StartPayment per partner.
	PartnerPayments Limit
	// Joins: WaitingRoomService.Join per caller.
	Joins Limit
}

// Defaults are the limits `seatghor serve` and `dev` start with. A buyer
// needs about 1.3 hold tries per order; these leave room for a human
// and none for a script.
func Defaults() Config {
	return Config{
		Holds:           Limit{Rate: 30, Per: time.Minute, Burst: 15},
		PartnerHolds:    Limit{Rate: 1200, Per: time.Minute, Burst: 200},
		SaleHolds:       Limit{Rate: 30, Per: 15 * time.Minute, Burst: 30},
		Payments:        Limit{Rate: 20, Per: time.Minute, Burst: 10},
		PartnerPayments: Limit{Rate: 600, Per: time.Minute, Burst: 100},
		Joins:           Limit{Rate: 10, Per: time.Minute, Burst: 5},
	}
}
