//go:build race

package proxytest

// Race is whether the race detector is built in: its shadow memory counts
// in RSS, so the bounds on RSS do not hold under it.
const Race = true
