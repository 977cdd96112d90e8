package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// FaultKind is what a fault does.
type FaultKind string

// The faults of a run.
const (
	// FaultKill: kill -9 a serve process, start it again after Restart.
	FaultKill FaultKind = "kill -9"
	// FaultPostgres: stop a PostgreSQL shard server immediately, start it
	// again after For.
	FaultPostgres FaultKind = "postgres crash"
	// FaultRedis: kill the Redis primary of a show's seat map; its replica
	// takes over.
	FaultRedis FaultKind = "redis primary killed"
	// FaultMeili and FaultMinIO: stop the server for For, then start it
	// again.
	FaultMeili FaultKind = "meilisearch outage"
	FaultMinIO FaultKind = "minio outage"
)

// The serve processes a kill picks from, the servers an outage stops and
// the PostgreSQL server that holds only shards (cluster up's second).
var (
	killable      = []string{"api-1", "api-2", "workers", "projectors"}
	shardServer   = 1
	outageProcess = map[FaultKind]string{FaultMeili: "meilisearch", FaultMinIO: "minio"}
)

// Fault is one planned fault: at At after the load starts, Kind on Target,
// lasting For (an outage, a crashed server) or restarted after Restart (a
// killed process).
type Fault struct {
	At      time.Duration `json:"at"`
	Kind    FaultKind     `json:"kind"`
	Target  string        `json:"target,omitempty"`
	For     time.Duration `json:"for,omitempty"`
	Restart time.Duration `json:"restart,omitempty"`
	// Show is the index (among the run's shows) of the show whose seat
	// map's Redis primary a FaultRedis kills.
	Show int `json:"show,omitempty"`
}

func (f Fault) String() string {
	s := fmt.Sprintf("%7.1fs  %s", f.At.Seconds(), f.Kind)
	if f.Target != "" {
		s += " " + f.Target
	}
	switch {
	case f.For > 0:
		s += fmt.Sprintf(" for %.1fs", f.For.Seconds())
	case f.Restart > 0:
		s += fmt.Sprintf(", started again after %.1fs", f.Restart.Seconds())
	case f.Kind == FaultRedis:
		s += fmt.Sprintf(" (the seat map of show #%d)", f.Show)
	}
	return s
}

// end is when the fault's window closes.
func (f Fault) end() time.Duration { return f.At + f.For + f.Restart }

// Schedule is the run's faults in time order, drawn from cfg's seed alone:
// the same seed and sizes give the same schedule (--seed replays it).
//
// Meilisearch's and MinIO's outages, the PostgreSQL crash and the Redis
// failover each get a quarter of the middle of the arrival window, in a
// seeded order, so that the errors of each outage are its own; the kills
// fall between them. The run applies the faults one after the other, a
// killed process started again before the next fault, so two serve
// processes are never down at once.
func Schedule(cfg Config, shows int) []Fault {
	rnd := rand.New(rand.NewPCG(cfg.Seed, 0x5c4ed01e))
	span := cfg.Arrival
	lo, hi := span/10, span*9/10
	quarter := (hi - lo) / 4
	kinds := []FaultKind{FaultMeili, FaultMinIO, FaultPostgres, FaultRedis}
	rnd.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	var out []Fault
	for i, k := range kinds {
		f := Fault{Kind: k}
		switch k {
		case FaultMeili, FaultMinIO:
			f.For, f.Target = cfg.Outage, outageProcess[k]
		case FaultPostgres:
			f.For, f.Target = min(between(rnd, 3*time.Second, 8*time.Second), quarter/2), "postgres-2"
		case FaultRedis:
			f.Show = rnd.IntN(max(shows, 1))
		}
		room := max(quarter-f.For, 0)
		f.At = lo + time.Duration(i)*quarter + time.Duration(rnd.Int64N(int64(room)+1))
		out = append(out, f)
	}
	windows := slices.Clone(out)
	// Kills: random moments outside the windows above (with a margin for
	// their effects), at least gap apart.
	gap := max(min(4*time.Second, (span*9/10)/time.Duration(2*max(cfg.Kills, 1))), 500*time.Millisecond)
	var kills []time.Duration
	free := func(at time.Duration) bool {
		for _, w := range windows {
			if at > w.At-2*time.Second && at < w.end()+3*time.Second {
				return false
			}
		}
		for _, k := range kills {
			if at > k-gap && at < k+gap {
				return false
			}
		}
		return true
	}
	for n := 0; len(kills) < cfg.Kills && n < 100*cfg.Kills+100; n++ {
		at := span/20 + time.Duration(rnd.Int64N(int64(span*9/10)))
		if free(at) {
			kills = append(kills, at)
		}
	}
	// A window too crowded for the rest: they go evenly, windows or not.
	for i := len(kills); i < cfg.Kills; i++ {
		kills = append(kills, span/20+time.Duration(i)*(span*9/10)/time.Duration(cfg.Kills))
	}
	for _, at := range kills {
		out = append(out, Fault{At: at, Kind: FaultKill, Target: killable[rnd.IntN(len(killable))],
			Restart: between(rnd, 500*time.Millisecond, 3*time.Second)})
	}
	slices.SortStableFunc(out, func(a, b Fault) int { return int(a.At - b.At) })
	return out
}

// between draws a duration in [lo, hi].
func between(rnd *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rnd.Int64N(int64(hi-lo)+1)).Round(100*time.Millisecond)
}
