package idempotency

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/seatghor/seatghor/server/fault"
)

// Faults is the Codec of a domain's business answers (decision 0318): the
// first *fault.Error of an error's chain is recorded when it was made for
// the request (not a sentinel) and its reason is one of reasons, and it is
// replayed as it was. Anything else is not recorded: a retry does the work
// again (a show moving, a store that did not answer, a sentinel that may
// not hold next time). name says whose answers they are in messages.
//
// kinds reads what the domain recorded before decision 0318: its own
// error type, whose kind (the "kind" field, "" for a type without one)
// kinds maps to the reason. Records live Retention, so kinds may be nil
// from the second release after that decision on.
func Faults(name string, reasons []fault.Reason, kinds map[string]fault.Reason) Codec {
	return Codec{
		EncodeError: func(err error) (json.RawMessage, bool) {
			e, ok := fault.As(err)
			if !ok || e.Shared() || !slices.Contains(reasons, e.Reason) {
				return nil, false
			}
			b, err := json.Marshal(e)
			return b, err == nil
		},
		DecodeError: func(raw json.RawMessage) error {
			var rec struct {
				fault.Error
				Kind *string `json:"kind"`
			}
			if err := json.Unmarshal(raw, &rec); err != nil {
				return fmt.Errorf("decode recorded %s error: %w", name, err)
			}
			e := rec.Error
			if e.Reason == "" {
				kind := ""
				if rec.Kind != nil {
					kind = *rec.Kind
				}
				r, ok := kinds[kind]
				if !ok {
					return fmt.Errorf("decode recorded %s error: no reason and no known kind in %s", name, raw)
				}
				e.Reason = r
			}
			return &e
		},
	}
}

// Union records the business errors of several domains, for work that may
// answer any of them: each under its name ({"booking": …}), tried in the
// order of the names.
func Union(named map[string]Codec) Codec {
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	slices.Sort(names)
	return Codec{
		EncodeError: func(err error) (json.RawMessage, bool) {
			for _, n := range names {
				if raw, ok := named[n].EncodeError(err); ok {
					b, err := json.Marshal(map[string]json.RawMessage{n: raw})
					return b, err == nil
				}
			}
			return nil, false
		},
		DecodeError: func(raw json.RawMessage) error {
			var tagged map[string]json.RawMessage
			if err := json.Unmarshal(raw, &tagged); err != nil {
				return fmt.Errorf("decode recorded error: %w", err)
			}
			for n, r := range tagged {
				if c, ok := named[n]; ok {
					return c.DecodeError(r)
				}
			}
			return fmt.Errorf("decode recorded error: none of %v in %s", names, raw)
		},
	}
}
