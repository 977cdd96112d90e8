package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/server/auth"
)

// rule is one limit on one procedure for one kind of caller.
type rule struct {
	name      string
	procedure string
	partner   bool // applies to partner callers (else to everyone else)
	perSale   bool // counted per caller and sale (Sales.SaleOf the show)
	limit     Limit
}

func (c Config) rules() []rule {
	hold := bookingv1connect.HoldServiceCreateHoldProcedure
	pay := paymentv1connect.PaymentServiceStartPaymentProcedure
	join := waitingroomv1connect.WaitingRoomServiceJoinProcedure
	all := []rule{
		{"holds", hold, false, false, c.Holds},
		{"partner-holds", hold, true, false, c.PartnerHolds},
		{"sale-holds", hold, false, true, c.SaleHolds},
		{"payments", pay, false, false, c.Payments},
		{"partner-payments", pay, true, false, c.PartnerPayments},
		{"joins", join, false, false, c.Joins},
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

// RetryAfterHeader is the HTTP header of a refusal's wait.
const RetryAfterHeader = "Retry-After"

// NewInterceptor returns the interceptor that enforces cfg with counts in
// Redis under prefix. It runs right after authentication (the caller is the
// key) and before anything else costs work. When Redis does not answer the
// call goes through: the limits protect, they do not decide.
// Refusals are counted in seatghor_rate_limited_total{limit} on reg. The
// per-sale cap counts by sales when given, else per show.
func NewInterceptor(rdb redis.UniversalClient, prefix string, cfg Config, sales Sales, log *slog.Logger,
	reg prometheus.Registerer) connect.Interceptor {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seatghor_rate_limited_total", Help: "Calls refused by a rate limit (R-9.6, R-10).",
	}, []string{"limit"})
	if reg != nil {
		reg.MustRegister(refused)
	}
	return &interceptor{rdb: rdb, script: redis.NewScript(gcraScript), prefix: prefix + "rl:", rules: cfg.rules(), sales: sales,
		log: log, refused: refused}
}

type interceptor struct {
	rdb     redis.Scripter
	script  *redis.Script
	prefix  string
	rules   []rule
	sales   Sales
	log     *slog.Logger
	refused *prometheus.CounterVec
}

func (i *interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := i.check(ctx, req); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (i *interceptor) check(ctx context.Context, req connect.AnyRequest) error {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil
	}
	partner := p.Is(auth.RolePartner)
	caller := callerKey(p)
	var cs []counted
	for _, r := range i.rules {
		if r.procedure != req.Spec().Procedure || r.partner != partner {
			continue
		}
		sale := int64(-1)
		if r.perSale {
			s, ok := req.Any().(interface{ GetShowId() int64 })
			if !ok {
				continue
			}
			sale = s.GetShowId()
			if i.sales != nil {
				var err error
				if sale, err = i.sales.SaleOf(ctx, sale); err != nil {
					i.log.WarnContext(ctx, "rate limit not checked: the show's sale is unknown", "limit", r.name, "err", err)
					continue
				}
			}
		}
		cs = append(cs, counted{rule: r, key: i.countKey(caller, r.name, sale)})
	}
	if len(cs) == 0 {
		return nil
	}
	refused, wait, err := allow(ctx, i.rdb, i.script, cs)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		i.log.WarnContext(ctx, "rate limit not checked: Redis did not answer", "err", err)
		return nil
	}
	if refused >= 0 {
		r := cs[refused].rule
		i.refused.WithLabelValues(r.name).Inc()
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
func (i *interceptor) countKey(caller, limit string, sale int64) string {
	key := i.prefix + "{" + caller + "}:" + limit
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

func (e *ExceededError) Error() string {
	return fmt.Sprintf("too many requests (%s: %d per %s); retry in %s", e.Limit, e.Rate, e.Per, e.Wait.Round(time.Millisecond))
}

// Quota describes the limit for a QuotaFailure violation.
func (e *ExceededError) Quota() string {
	return fmt.Sprintf("%d per %s, bursts of %d", e.Rate, e.Per, e.Burst)
}

// RetryAfter is the Retry-After header's value: whole seconds, rounded up.
func (e *ExceededError) RetryAfter() string { return strconv.Itoa(int(math.Ceil(e.Wait.Seconds()))) }

func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// The limited RPCs are unary; streams pass untouched.
func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
