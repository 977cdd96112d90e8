package seatghor

import (
	"context"
	"iter"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
)

// pages walks a paged list (the <Method>All iterators of services.gen.go):
// it calls call with req, then with each next_page_token until there is none,
// yielding each item. Every walk starts again from req's page: req is copied,
// never changed.
func pages[Req, Res, Item any](
	ctx context.Context,
	req *Req,
	call func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error),
	setToken func(*Req, string),
	items func(*Res) ([]Item, string),
) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		// Every *Req of the generated code is a proto.Message, and Clone
		// returns the type it was given.
		r := any(proto.Clone(any(req).(proto.Message))).(*Req)
		for {
			res, err := call(ctx, connect.NewRequest(r))
			if err != nil {
				var zero Item
				yield(zero, err)
				return
			}
			list, next := items(res.Msg)
			for _, it := range list {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			setToken(r, next)
		}
	}
}
