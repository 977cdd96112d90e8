package network

import "github.com/seatghor/seatghor/server/fault"

// asFault is the field a business error names.
func asFault(err error) (string, bool) {
	e, ok := fault.As(err)
	if !ok {
		return "", false
	}
	return e.Field, true
}
