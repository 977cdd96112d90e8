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
