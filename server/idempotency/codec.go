package idempotency

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrorsOf is the Codec of a domain whose business errors are one type,
// *E: they are recorded as JSON and replayed as *E; every other error is
// not recorded. name says whose errors they are in messages.
func ErrorsOf[E any, P interface {
	*E
	error
}](name string) Codec {
	return Codec{
		EncodeError: func(err error) (json.RawMessage, bool) {
			var e P
			if !errors.As(err, &e) {
				return nil, false
			}
			b, err := json.Marshal(e)
			return b, err == nil
		},
		DecodeError: func(raw json.RawMessage) error {
			var e E
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("decode recorded %s error: %w", name, err)
			}
			return P(&e)
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
