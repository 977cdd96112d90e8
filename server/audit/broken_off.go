//go:build !chaosbroken

package audit

// recorded says whether Record writes its entry: always. Only the chaos
// run's deliberately broken build (build tag chaosbroken, decision 0411)
// can drop it.
func recorded() bool { return true }
