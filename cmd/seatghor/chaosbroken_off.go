//go:build !chaosbroken

package main

// chaosBrokenBuild is false in every build but the chaos run's deliberately
// broken one (build tag chaosbroken, decision 0411): `seatghor chaos
// --broken` refuses to run on a binary that cannot break.
const chaosBrokenBuild = false
