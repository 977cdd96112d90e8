package chaos

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/audit"
)

// The operator's console in the chaos load: an organiser changes a show's
// Bengali venue name every half second through the faults, as the
// console's Edit does (UpdateShow, with a reason). The show is the run's
// own and sells nothing: each change drops its seat map's layout in Redis
// for the next read to reload (ShowPublished), which the seat maps'
// comparison would read as a map not there once the readers stop. Each change is
// audited in its own transaction (decision 0446), so every change the
// organiser was answered must be in the audit log exactly once, and the
// log must hold no change nobody asked for (R4).

// edits is what the run asked the console to change.
type edits struct {
	show     int64           // the show edited
	asked    map[string]bool // every venue_bn sent
	answered map[string]bool // those UpdateShow answered OK
}

// consoleEdits renames the show's venue in Bengali until the load ends.
func (r *run) consoleEdits(ctx context.Context) {
	if r.edits.show == 0 {
		return
	}
	every(ctx, 500*time.Millisecond, func(i int) {
		name := fmt.Sprintf("শিল্পকলা একাডেমি (%s-%d)", r.tag, i+1)
		r.mu.Lock()
		r.edits.asked[name] = true
		r.mu.Unlock()
		_, err := call(ctx, r.rec, r.admin, "UpdateShow", func(ctx context.Context, c clients) (*connect.Response[catalogv1.UpdateShowResponse], error) {
			return c.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: r.edits.show, VenueBn: &name,
				Reason: "chaos: the console's edit"}))
		})
		if err == nil {
			r.mu.Lock()
			r.edits.answered[name] = true
			r.mu.Unlock()
		}
	})
}

// editProblems compares the audit log of the show with the edits: an
// answered change missing or recorded twice, or a change recorded that
// was never asked for. checked is how many changes were answered.
func (r *run) editProblems(ctx context.Context) (checked int64, problems []string, err error) {
	if r.edits.show == 0 {
		return 0, []string{"no show to edit"}, nil
	}
	entries, err := r.d.App.Catalog.AuditEntries(ctx, audit.Filter{Target: fmt.Sprintf("show:%d", r.edits.show), Action: "show.update", Limit: 1000})
	if err != nil {
		return 0, nil, err
	}
	recorded := map[string]int{}
	for _, e := range entries {
		after, _ := e.Detail["after"].(map[string]any)
		if name, ok := after["venue_bn"].(string); ok {
			recorded[name]++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.edits.answered {
		checked++
		if n := recorded[name]; n != 1 {
			problems = append(problems, fmt.Sprintf("%q answered, audited %d times", name, n))
		}
	}
	for name, n := range recorded {
		if !r.edits.asked[name] {
			problems = append(problems, fmt.Sprintf("%q audited %d times, never asked", name, n))
		} else if n > 1 && !r.edits.answered[name] {
			problems = append(problems, fmt.Sprintf("%q audited %d times", name, n))
		}
	}
	return checked, problems, nil
}
