package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/seatghor/seatghor/server/shardmove"
)

// runShard runs `seatghor shard move --show N --to S`: the show moves to
// shard S online (R-4.2; decision 0205), its writes frozen only for the
// last copy, which the report measures.
func runShard(ctx context.Context, cfg config, args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) == 0 || args[0] != "move" {
		return fmt.Errorf("%w: shard: want `shard move --show N --to S`", errUsage)
	}
	fs := newFlags("shard move")
	show := fs.Int64("show", 0, "the show to move")
	to := fs.Int("to", -1, "the index of the shard to move it to (SEATGHOR_SHARD_URLS order)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: shard move: %v", errUsage, err)
	}
	if *show <= 0 || *to < 0 {
		return fmt.Errorf("%w: shard move: --show and --to are required", errUsage)
	}
	a, err := openTool(ctx, cfg, "shard move", log)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := shardmove.New(a.Router, shardmove.Options{Log: log}).Move(ctx, *show, *to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "show %d moved from shard %d to shard %d: %d copy passes, %d rows copied, %d deleted from shard %d; writes frozen for %s\n",
		rep.ShowID, rep.From, rep.To, rep.Passes, rep.Copied, rep.Deleted, rep.From, rep.Freeze)
	return nil
}
