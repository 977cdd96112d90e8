package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/server/auth"
)

// Action is a kind of call the limits count.
type Action string

// The actions: the API edge names the call of each (server/api).
const (
	// Hold is a hold of seats (CreateHold).
	Hold Action = "hold"
	// Pay is a payment attempt (StartPayment).
	Pay Action = "pay"
	// Join is joining a waiting room (Join).
	Join Action = "join"
)

// rule is one limit on one action for one kind of caller.
type rule struct {
	name    string
	action  Action
	partner bool // applies to partner callers (else to everyone else)
	perSale bool // counted per caller and sale (Sales.SaleOf the show)
	limit   Limit
}

func (c Config) rules() []rule {
	all := []rule{
		{"holds", Hold, false, false, c.Holds},
		{"partner-holds", Hold, true, false, c.PartnerHolds},
		{"sale-holds", Hold, false, true, c.SaleHolds},
		{"payments", Pay, false, false, c.Payments},
		{"partner-payments", Pay, true, false, c.PartnerPayments},
		{"joins", Join, false, false, c.Joins},
	}
	var on []rule
	for _, r := range all {
		if !r.limit.Off() {
			on = append(on, r)
		}
	}
	return on
}

// Sales names the sale a show sells through: the sale of several shows it
// belongs to (its waiting room's, waitingroom.Service), else the show itself.
type Sales interface {
	SaleOf(ctx context.Context, showID int64) (int64, error)
}

// New returns the limiter that enforces cfg with counts in Redis under
// prefix. Refusals are counted in seatghor_rate_limited_total{limit} on
// reg. The per-sale cap counts by sales when given, else per show.
func New(rdb redis.UniversalClient, prefix string, cfg Config, sales Sales, log *slog.Logger,
	reg prometheus.Registerer) *Limiter {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seatghor_rate_limited_total", Help: "Calls refused by a rate limit (R-9.6, R-10).",
	}, []string{"limit"})
	if reg != nil {
		reg.MustRegister(refused)
	}
	return &Limiter{rdb: rdb, script: redis.NewScript(gcraScript), prefix: prefix + "rl:", rules: cfg.rules(), sales: sales,
		log: log, refused: refused}
}

// Limiter counts calls against the limits. Safe for concurrent use.
type Limiter struct {
	rdb     redis.Scripter
	script  *redis.Script
	prefix  string
	rules   []rule
	sales   Sales
	log     *slog.Logger
	refused *prometheus.CounterVec
}

// Allow counts one call of action about showID by the caller in ctx
// (auth.FromContext) and refuses it with an *ExceededError when one of its
// limits is spent; a call without a caller is not counted. The API edge
// calls it right after authentication (the caller is the key) and before
// anything else costs work. When Redis does not answer the call goes
// through: the limits protect, they do not decide.
func (l *Limiter) Allow(ctx context.Context, action Action, showID int64) error {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	partner := p.Is(auth.RolePartner)
	caller := callerKey(p)
	var cs []counted
	for _, r := range l.rules {
		if r.action != action || r.partner != partner {
			continue
		}
		sale := int64(-1)
		if r.perSale {
			sale = showID
			if l.sales != nil {
				var err error
				if sale, err = l.sales.SaleOf(ctx, sale); err != nil {
					l.log.WarnContext(ctx, "rate limit not checked: the show's sale is unknown", "limit", r.name, "err", err)
					continue
				}
			}
		}
		cs = append(cs, counted{rule: r, key: l.countKey(caller, r.name, sale)})
	}
	if len(cs) == 0 {
		return nil
	}
	refused, wait, err := allow(ctx, l.rdb, l.script, cs)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.log.WarnContext(ctx, "rate limit not checked: Redis did not answer", "err", err)
		return nil
	}
	if refused >= 0 {
		r := cs[refused].rule
		l.refused.WithLabelValues(r.name).Inc()
		return exhausted(r, wait)
	}
	return nil
}

// countKey is the Redis key of one caller's count of one limit (of one
// sale when sale ≥ 0). The caller is the key's hash tag, so all of a call's
// counts are in one Redis Cluster slot and one script checks them
// (decision 0225); the prefix carries no hash tag on a cluster (decision
// 0200), and whatever a caller's name holds, every key of the caller
// begins alike up to the tag's end.
func (l *Limiter) countKey(caller, limit string, sale int64) string {
	key := l.prefix + "{" + caller + "}:" + limit
	if sale >= 0 {
		key += ":" + strconv.FormatInt(sale, 10)
	}
	return key
}

// callerKey is whose count a call adds to: a partner's, for every key and
// token of the partner alike (a partner cannot multiply its limit by making
// keys); anyone else's own.
func callerKey(p auth.Principal) string {
	if p.Is(auth.RolePartner) && p.PartnerID > 0 {
		return "partner:" + strconv.FormatInt(p.PartnerID, 10)
	}
	return p.UserID
}

// exhausted is the refusal: the API's error table answers it
// resource_exhausted with how long to wait, as a RetryInfo detail and a
// Retry-After header (whole seconds, rounded up), and a QuotaFailure naming
// the limit (docs/errors.md).
func exhausted(r rule, wait time.Duration) error {
	return &ExceededError{Limit: r.name, Rate: r.limit.Rate, Per: r.limit.Per, Burst: r.limit.Burst,
		Wait: max(wait, time.Millisecond)}
}

// ExceededError is a call refused by a limit.
type ExceededError struct {
	// Limit names the limit (holds, sale-holds, payments, …).
	Limit string
	Rate  int
	Per   time.Duration
	Burst int
	// Wait is how long until the call would be allowed.
	Wait time.Duration
}

// Counted is the refusal of a limit counted in a database (rate calls per
// period, no burst beyond it) whose next call is allowed after wait: the
// wait is told in whole seconds with one to spare, so a caller who waits
// as told is not refused again by the rounding.
func Counted(limit string, rate int, per, wait time.Duration) *ExceededError {
	return &ExceededError{Limit: limit, Rate: rate, Per: per, Burst: rate, Wait: wait.Round(time.Second) + time.Second}
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("too many requests (%s: %d per %s); retry in %s", e.Limit, e.Rate, e.Per, e.Wait.Round(time.Millisecond))
}

// Quota describes the limit for a QuotaFailure violation.
func (e *ExceededError) Quota() string {
	return fmt.Sprintf("%d per %s, bursts of %d", e.Rate, e.Per, e.Burst)
}

// RetryAfter is the Retry-After header's value: whole seconds, rounded up.
func (e *ExceededError) RetryAfter() string { return strconv.Itoa(int(math.Ceil(e.Wait.Seconds()))) }
