//go:build chaosbroken

package main

// chaosBrokenBuild: this binary was built with the tag chaosbroken, whose
// serve processes drop a guarantee when SEATGHOR_CHAOS_BROKEN names it
// (decision 0411). Never ship it.
const chaosBrokenBuild = true
