// Package seatghor is the Go client of the Seatghor ticket API, for partners
// (resellers, travel agencies, banks' apps) and for Seatghor's own tools.
//
// One Client holds a Connect client per API service (Client.Hold,
// Client.Order, Client.Payment, …; generated from the API's protos). Every
// call it makes:
//
//   - carries the partner's API key or a token (Authorization: Bearer …);
//   - gets an Idempotency-Key when it changes state and the caller set none,
//     the same key on each retry of that call, so the server answers a
//     repeat with its first answer and a purchase happens once;
//   - is retried on unavailable, on a call with the same key still running
//     and on RATE_LIMITED, waiting as the server's RetryInfo or Retry-After
//     says or backing off (see RetryPolicy);
//   - fails with a typed error from the reason the API names
//     (docs/errors.md): errors.As(err, &seatghor.SeatsUnavailableError{}).
//     Every reason has a constant (ReasonSeatsUnavailable, …) whose doc
//     says when it is sent and what to do.
//
// SeatStates reads each seat's state (available, held, booked) from a seat
// map.
//
// Paged lists have iterators: for show, err := range c.Catalog.ListShowsAll(ctx, req).
//
// The protocol is Connect by default; WithGRPC and WithGRPCWeb pick the
// others. The generated messages and clients are in the gen/ packages of this
// module, so the SDK needs nothing of the server's module.
package seatghor
