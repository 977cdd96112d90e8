package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/shardmove"
)

// shardMoveOptions are the flags of `seatghor shard move`.
type shardMoveOptions struct {
	show  int64
	to    int
	abort bool
}

func (o *shardMoveOptions) register(fs *pflag.FlagSet) {
	fs.Int64Var(&o.show, "show", 0, "the show to move")
	fs.IntVar(&o.to, "to", -1, "the index of the shard to move it to (SEATGHOR_SHARD_URLS order)")
	fs.BoolVar(&o.abort, "abort", false, "settle a move whose mover died without moving: the directory's shard serves the show, other copies are deleted")
}

// runShardMove runs `seatghor shard move --show N --to S`: the show moves
// to shard S online (R-4.2; decision 0205), its writes frozen only for the
// last copy, which the report measures; `--abort` settles what a dead
// mover left instead (decision 0240).
func runShardMove(ctx context.Context, cfg config, o shardMoveOptions, stdout io.Writer, log *slog.Logger) error {
	if o.show <= 0 || (o.to < 0) == !o.abort {
		return fmt.Errorf("%w: shard move: --show and either --to or --abort are required", errUsage)
	}
	router, closeAll, err := loginRouter(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeAll()
	mover := shardmove.New(router, shardmove.Options{Log: log})
	if o.abort {
		rep, err := mover.Abort(ctx, o.show)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "show %d is served by shard %d; %d rows of earlier moves deleted elsewhere\n", rep.ShowID, rep.From, rep.Leftovers)
		return nil
	}
	rep, err := mover.Move(ctx, o.show, o.to)
	if err != nil {
		return err
	}
	if rep.Leftovers > 0 {
		fmt.Fprintf(stdout, "show %d: %d rows an interrupted move left were deleted\n", rep.ShowID, rep.Leftovers)
	}
	if rep.From == rep.To {
		fmt.Fprintf(stdout, "show %d was already on shard %d\n", rep.ShowID, rep.To)
		return nil
	}
	fmt.Fprintf(stdout, "show %d moved from shard %d to shard %d: %d copy passes, %d rows copied, %d deleted from shard %d; writes frozen for %s\n",
		rep.ShowID, rep.From, rep.To, rep.Passes, rep.Copied, rep.Deleted, rep.From, rep.Freeze)
	return nil
}

// loginRouter opens the catalog and the shards as the login role, not the
// application role: a move deletes the moved show's journals from the old
// shard, which the application role may never do (R-7.2, shard migration
// 00086).
func loginRouter(ctx context.Context, cfg config) (*shard.Router, func(), error) {
	if cfg.CatalogURL == "" || len(cfg.ShardURLs) == 0 {
		return nil, nil, errors.New("shard move needs SEATGHOR_CATALOG_URL and SEATGHOR_SHARD_URLS")
	}
	var pools []*pg.Pool
	closeAll := func() {
		for _, p := range pools {
			p.Close()
		}
	}
	cat, err := pg.Open(ctx, "catalog", cfg.CatalogURL, 4)
	if err != nil {
		return nil, nil, err
	}
	pools = append(pools, cat)
	for i, url := range cfg.ShardURLs {
		p, err := pg.Open(ctx, fmt.Sprintf("shard-%d", i), url, 4)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		pools = append(pools, p)
	}
	return shard.NewRouter(cat, pools[1:]), closeAll, nil
}
