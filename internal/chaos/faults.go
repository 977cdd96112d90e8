package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/seatghor/seatghor/projections/eticket"
	"github.com/seatghor/seatghor/projections/tripindex"
)

// Injected is a fault as it happened: when (after the load started), what,
// how long the part was away and how long it took to be back.
type Injected struct {
	Fault
	// Late is how much after its planned moment the fault came (the one
	// before it was still being undone).
	Late time.Duration `json:"late,omitempty"`
	// Down is how long the part was away, Recovered how long it took to be
	// ready again once started (or, for Redis, the replica to take over).
	Down      time.Duration `json:"down"`
	Recovered time.Duration `json:"recovered"`
	// Detail says more (the Redis nodes); Err is what went wrong applying
	// it.
	Detail string `json:"detail,omitempty"`
	Err    string `json:"error,omitempty"`
}

// catchUpProjector is the read model an outage holds back: the trip index
// waits for Meilisearch, the e-tickets for MinIO.
var catchUpProjector = map[FaultKind]string{FaultMeili: tripindex.Name, FaultMinIO: eticket.Name}

// applyFaults applies the schedule, one fault after the other: each at its
// moment, or as soon as the one before is undone.
func (r *run) applyFaults(ctx context.Context) {
	for _, f := range r.schedule {
		at := r.loadStart.Add(f.At)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		in := Injected{Fault: f, Late: max(time.Since(at), 0).Round(time.Millisecond)}
		if in.Late < 50*time.Millisecond {
			in.Late = 0
		}
		err := r.apply(ctx, f, &in)
		if err != nil {
			in.Err = err.Error()
			r.say("fault %s: %v", f.Kind, err)
		} else {
			r.say("fault %-22s %-12s down %5.1fs, back in %5.1fs %s", f.Kind, f.Target, in.Down.Seconds(), in.Recovered.Seconds(), in.Detail)
		}
		r.mu.Lock()
		r.injected = append(r.injected, in)
		r.mu.Unlock()
	}
}

// apply applies one fault and undoes it.
func (r *run) apply(ctx context.Context, f Fault, in *Injected) error {
	cl := r.d.Cluster
	began := time.Now()
	back := func(start func() error) error {
		t := time.Now()
		err := start()
		in.Recovered = time.Since(t).Round(time.Millisecond)
		in.Down = time.Since(began).Round(time.Millisecond)
		return err
	}
	switch f.Kind {
	case FaultKill:
		if err := cl.Kill(ctx, f.Target); err != nil {
			return err
		}
		sleep(ctx, f.Restart)
		return back(func() error { return cl.Start(ctx, f.Target) })
	case FaultPostgres:
		if err := cl.CrashPostgres(ctx, shardServer); err != nil {
			return err
		}
		sleep(ctx, f.For)
		return back(func() error { return cl.StartPostgres(ctx, shardServer) })
	case FaultRedis:
		key := fmt.Sprintf("%sseatmap:{%d}:avail", r.d.RedisPrefix, r.shows[f.Show%len(r.shows)].ID)
		killed, promoted, err := cl.KillRedisPrimary(ctx, key)
		in.Down = time.Since(began).Round(time.Millisecond)
		in.Recovered = in.Down
		in.Detail = fmt.Sprintf("(%s killed, %s promoted)", killed, promoted)
		return err
	case FaultMeili, FaultMinIO:
		name := outageProcess[f.Kind]
		if err := cl.Stop(ctx, name); err != nil {
			return err
		}
		sleep(ctx, f.For)
		err := back(func() error { return cl.Start(ctx, name) })
		up := time.Now()
		r.mu.Lock()
		r.windows[f.Kind] = window{from: began, to: up}
		r.mu.Unlock()
		if err == nil {
			r.catching.Go(func() { r.timeCatchUp(ctx, f.Kind, up) })
		}
		return err
	}
	return fmt.Errorf("unknown fault %q", f.Kind)
}

// timeCatchUp measures how long after its server is back a read model has
// applied every event written before: the outage's catch-up. It watches
// until the read models' convergence is over (r.watched).
func (r *run) timeCatchUp(ctx context.Context, k FaultKind, up time.Time) {
	name := catchUpProjector[k]
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.watched:
			r.mu.Lock()
			r.catchUp[k] = -1
			r.mu.Unlock()
			return
		default:
		}
		n, err := r.d.App.Projections.Behind(ctx, name, up)
		if err == nil && n == 0 {
			r.mu.Lock()
			r.catchUp[k] = time.Since(up).Round(time.Millisecond)
			r.mu.Unlock()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
