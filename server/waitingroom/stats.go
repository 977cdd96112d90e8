package waitingroom

import (
	"context"
	"strconv"
	"time"
)

// latencyBounds are the upper bounds (ms) of the CreateHold latency
// histogram the API processes share in Redis; the last bucket is open.
var latencyBounds = []int64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000}

// RecordHold counts one CreateHold in a sale whose room is open: how long
// it took and whether it failed with a server error. Every API process
// adds to the same per-second histogram in Redis, so the admitter (in the
// workers role, maybe elsewhere) sees the whole platform's latency. A
// failure to record is only logged: measuring must never fail a hold.
func (s *Service) RecordHold(ctx context.Context, saleID int64, took time.Duration, failed bool) {
	b := len(latencyBounds)
	for i, ub := range latencyBounds {
		if took <= time.Duration(ub)*time.Millisecond {
			b = i
			break
		}
	}
	key := s.keys(saleID).stats + strconv.FormatInt(s.now().Unix(), 10)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 500*time.Millisecond)
	defer cancel()
	p := s.rdb.Pipeline()
	p.HIncrBy(ctx, key, "b"+strconv.Itoa(b), 1)
	p.HIncrBy(ctx, key, "n", 1)
	if failed {
		p.HIncrBy(ctx, key, "e", 1)
	}
	p.Expire(ctx, key, 10*time.Minute)
	if _, err := p.Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "record hold latency for the admission controller", "sale", saleID, "err", err)
	}
}

// signal reads the histogram of the last window (whole seconds up to now).
func (s *Service) signal(ctx context.Context, saleID int64, now time.Time) (Signal, error) {
	secs := max(int64(s.cfg.Controller.Window/time.Second), 1)
	p := s.rdb.Pipeline()
	base := s.keys(saleID).stats
	cmds := make([]interface {
		Val() map[string]string
	}, 0, secs)
	for i := range secs {
		cmds = append(cmds, p.HGetAll(ctx, base+strconv.FormatInt(now.Unix()-i, 10)))
	}
	if _, err := p.Exec(ctx); err != nil {
		return Signal{}, err
	}
	counts := make([]int64, len(latencyBounds)+1)
	var n, errs int64
	for _, c := range cmds {
		m := c.Val()
		n += toInt(m["n"])
		errs += toInt(m["e"])
		for i := range counts {
			counts[i] += toInt(m["b"+strconv.Itoa(i)])
		}
	}
	sig := Signal{Samples: int(n)}
	if n == 0 {
		return sig, nil
	}
	sig.ErrorRate = float64(errs) / float64(n)
	// The p99 is the upper bound of the bucket the 99th percentile falls in.
	need := (n*99 + 99) / 100
	var seen int64
	for i, c := range counts {
		seen += c
		if seen >= need {
			if i < len(latencyBounds) {
				sig.P99 = time.Duration(latencyBounds[i]) * time.Millisecond
			} else {
				sig.P99 = 30 * time.Second
			}
			break
		}
	}
	return sig, nil
}
