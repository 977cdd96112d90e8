//go:build !chaosbroken

package booking

// brokenHolds is false in every build but the chaos run's deliberately
// broken one (build tag chaosbroken, decision 0411): no environment makes a
// normal binary drop the hold update's status condition.
const brokenHolds = false
