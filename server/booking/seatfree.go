package booking

// seatFree is the status condition of every hold's seat update: the seat
// of alias ("" for none) is available, or held by a hold that ran out by
// now. Its row count decides the race; the build the chaos
// run must catch drops it (brokenHolds, decision 0411).
func seatFree(alias, now string) string {
	if brokenHolds {
		return "true"
	}
	p := ""
	if alias != "" {
		p = alias + "."
	}
	return "(" + p + "status = 'available' OR (" + p + "status = 'held' AND " + p + "held_until < " + now + "))"
}

// keptForCounters is the condition, for a counter's hold (counter, a
// boolean parameter), on a seat of alias held for the operator's counters
// after a no-show (decision 0482) until a time not yet reached by now:
// the counter may take it; every other hold sees it held.
func keptForCounters(alias, counter, now string) string {
	p := ""
	if alias != "" {
		p = alias + "."
	}
	return "(" + counter + "::bool AND " + p + "status = 'held' AND " + p + "hold_id LIKE '" + CounterHoldPrefix + "%' AND " +
		p + "held_until >= " + now + ")"
}
