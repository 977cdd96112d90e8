package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
)

// errVerify means `seatghor verify` found a broken invariant.
var errVerify = errors.New("verify: invariants broken")

// verifyOptions are the flags of `seatghor verify`.
type verifyOptions struct {
	rebuild bool
	timeout time.Duration
}

func (o *verifyOptions) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.rebuild, "rebuild", false, "then drop every read model and replay it from the outboxes")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --rebuild may take")
}

// runVerify checks the invariants that must hold in any copy of the
// databases — after a restore above all (docs/operations.md): no seat in
// two confirmed bookings or live holds, no hold owning part of its
// seats, no general-admission area past its capacity, a
// balanced ledger, every order charged at most once and every paid
// confirmed order exactly once, every webhook event stored once
// it tells the attempts and refunds still open. With --rebuild it then drops every read model and replays it
// from the outboxes, returning once all have caught up.
func runVerify(ctx context.Context, cfg config, o verifyOptions, stdout io.Writer, log *slog.Logger) error {
	a, err := openTool(ctx, cfg, "verify", log)
	if err != nil {
		return err
	}
	defer a.Close()

	broken := false
	report := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark, broken = "FAIL", true
		}
		fmt.Fprintf(stdout, "%s "+format+"\n", append([]any{mark}, args...)...)
	}
	twice, err := a.Booking.CheckSeats(ctx)
	if err != nil {
		return err
	}
	report(twice == 0, "seats booked twice: %d", twice)
	holds, err := a.Booking.CheckHolds(ctx, time.Now())
	if err != nil {
		return err
	}
	report(holds.SeatsTwice == 0 && holds.Partial == 0, "live holds: %d; seats in two: %d, owning part of their seats: %d",
		holds.Holds, holds.SeatsTwice, holds.Partial)
	report(holds.GAOver == 0 && holds.GABuckets == 0, "general admission: areas past capacity %d, buckets off their holds %d",
		holds.GAOver, holds.GABuckets)
	tb, err := a.Ledger.Check(ctx)
	if err != nil {
		return err
	}
	report(tb.Balanced(), "ledger: trial balance %d, unbalanced journals %d %v", tb.SumMinor, tb.UnbalancedJournals, tb.UnbalancedTxnIDs)
	orders, problems, err := a.Payments.CheckChargedOnce(ctx, 20)
	if err != nil {
		return err
	}
	report(len(problems) == 0, "orders charged once: %d orders, %d wrong", orders, len(problems))
	for _, p := range problems {
		fmt.Fprintf(stdout, "     order %s (%s): %d booking charges\n", p.OrderID, p.Status, p.Booked)
	}
	out, err := a.Payments.CheckSettled(ctx)
	if err != nil {
		return err
	}
	report(out.EventsTwice == 0, "webhook events: %d stored, %d stored twice, %d not applied yet", out.Events, out.EventsTwice, out.Unprocessed)
	fmt.Fprintf(stdout, "info attempts open %d (unknown %d), refunds open %d, refunds the gateway refused (owed) %d\n",
		out.Open, out.Unknown, out.OpenRefunds, out.FailedRefunds)
	if broken {
		return errVerify
	}
	if !o.rebuild {
		return nil
	}
	return rebuildAll(ctx, a.Projections, o.timeout, stdout)
}

// readModels is what rebuildAll needs of the read side.
type readModels interface {
	Names() []string
	Rebuild(ctx context.Context, name string) error
	Run(ctx context.Context)
	Backlog(ctx context.Context) (int64, error)
}

// rebuildAll resets every read model, runs the projectors in this process
// (beside any others: one is active per projector and database) and
// returns once none has an event left, or when wait has passed.
func rebuildAll(ctx context.Context, p readModels, wait time.Duration, stdout io.Writer) error {
	start := time.Now()
	for _, name := range p.Names() {
		if err := p.Rebuild(ctx, name); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := p.Backlog(ctx)
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if n == 0 {
			fmt.Fprintf(stdout, "ok   read models rebuilt: %v in %s\n", p.Names(), time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("rebuild: %d events left after %s", n, wait)
		case <-tick.C:
		}
	}
}
