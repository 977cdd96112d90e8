package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tick moves every open room one step: it draws a lottery whose
// opening has come, reads the CreateHold signal and what is left to hold,
// lets the controller choose A, and advances X by A × dt. Only one process
// should tick at a time (RunAdmitter elects it); tests call Tick directly
// with a fake clock.
func (s *Service) Tick(ctx context.Context) error {
	now := s.now()
	rooms, err := s.rooms.open(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rooms {
		if err := s.tickRoom(ctx, r, now); err != nil {
			errs = append(errs, fmt.Errorf("sale %d: %w", r.SaleID, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) tickRoom(ctx context.Context, r Room, now time.Time) error {
	k := s.keys(r.SaleID)
	nowMs := now.UnixMilli()
	if now.Before(r.OpensAt) {
		// Before the opening only the lottery fills: nothing to measure or
		// admit, so no query of the seat database.
		p := s.rdb.TxPipeline()
		p.HSet(ctx, k.live, "paused", b2i(r.Paused), "opens", r.OpensAt.UnixMilli(), "ends", r.EndsAt.UnixMilli(), "tick", nowMs)
		p.Expire(ctx, k.live, r.EndsAt.Sub(now)+24*time.Hour)
		_, err := p.Exec(ctx)
		return err
	}
	if err := drawScript.Run(ctx, s.rdb, []string{k.live, k.lottery}, nowMs, r.OpensAt.UnixMilli()).Err(); err != nil {
		return err
	}
	f, err := s.rdb.HMGet(ctx, k.live, "drawn", "n0", "late", "x", "rate", "tick", "cut").Result()
	if err != nil {
		return err
	}
	drawn, n0, late, x := toInt(f[0]), toInt(f[1]), toInt(f[2]), toFloat(f[3])
	rate, last, lastCut := toFloat(f[4]), toInt(f[5]), toInt(f[6])
	available, err := s.available(ctx, r)
	if err != nil {
		return err
	}
	sig, err := s.signal(ctx, r.SaleID, now)
	if err != nil {
		return err
	}
	// dt counts from the last tick (or the draw), at most MaxStep, so a
	// leader that took over after a pause does not admit a burst.
	from := max(last, drawn)
	dt := time.Duration(0)
	if drawn > 0 && from > 0 && nowMs > from {
		dt = min(time.Duration(nowMs-from)*time.Millisecond, s.cfg.MaxStep)
	}
	mayCut := lastCut == 0 || time.Duration(nowMs-lastCut)*time.Millisecond >= s.cfg.Controller.Window
	rate, cut := s.cfg.Controller.Next(rate, r.MinRate, r.MaxRate, sig, dt, mayCut)
	// nothing left to hold stops admission; holds that come back
	// reopen it. Admitting more people per second than there are seats left
	// only makes a crowd, so A is bounded by what is available too.
	soldOut := available <= 0
	eff := math.Min(rate, float64(available))
	if soldOut || r.Paused || drawn == 0 {
		eff = 0
	}
	// X never runs ahead of the line: after a quiet spell a new crowd still
	// queues instead of walking in.
	if eff > 0 {
		x = math.Min(x+eff*dt.Seconds(), float64(n0+late))
	}
	fields := []any{
		"x", strconv.FormatFloat(x, 'f', 3, 64), "rate", strconv.FormatFloat(rate, 'f', 3, 64),
		"eff", strconv.FormatFloat(eff, 'f', 3, 64), "tick", nowMs, "soldout", b2i(soldOut), "paused", b2i(r.Paused),
		"avail", available, "p99", sig.P99.Milliseconds(), "errs", strconv.FormatFloat(sig.ErrorRate, 'f', 4, 64),
		"samples", sig.Samples, "opens", r.OpensAt.UnixMilli(), "ends", r.EndsAt.UnixMilli(),
	}
	if cut {
		fields = append(fields, "cut", nowMs)
	}
	s.metrics.set(r.SaleID, eff, x, n0+late, available, soldOut, sig)
	p := s.rdb.TxPipeline()
	p.HSet(ctx, k.live, fields...)
	p.Expire(ctx, k.live, r.EndsAt.Sub(now)+24*time.Hour)
	_, err = p.Exec(ctx)
	return err
}

// available is what can be held now in every show of the sale: admission
// stops only when all of them are sold out.
func (s *Service) available(ctx context.Context, r Room) (int64, error) {
	var n int64
	for _, id := range r.ShowIDs {
		a, err := s.seats.Available(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("seats of show %d: %w", id, err)
		}
		n += a
	}
	return n, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// leaderScript renews the admitter's lease if this process holds it, or
// takes it if nobody does. KEYS: lease. ARGV: id ttl_ms.
var leaderScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// lead tells whether this process is the admitter: one process moves the
// rooms at a time, so several workers agree on one X (a lease in Redis that
// lapses when its holder dies).
func (s *Service) lead(ctx context.Context) (bool, error) {
	n, err := leaderScript.Run(ctx, s.rdb, []string{s.prefix + "wr:admitter"}, s.id,
		(3 * s.cfg.Tick).Milliseconds()).Int()
	return n == 1, err
}

// RunAdmitter ticks every Tick while this process holds the admitter lease,
// until ctx ends (the workers role).
func (s *Service) RunAdmitter(ctx context.Context) {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		leader, err := s.lead(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("waiting room admitter: lease", "err", err)
			}
			continue
		}
		if !leader {
			continue
		}
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("waiting room admitter", "err", err)
		}
	}
}
