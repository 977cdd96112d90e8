//go:build !chaosbroken

package counter

// saleCash is the cash a counter sale's entry records: the order's total,
// what its journal posts to the counter's cash account, so a shift's
// entries sum to the ledger's movement. Only the chaos run's deliberately
// broken build (build tag chaosbroken, decisions 0411 and 0473) can record
// another.
func saleCash(totalMinor int64) int64 { return totalMinor }
