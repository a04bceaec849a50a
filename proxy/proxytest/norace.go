//go:build !race

package proxytest

// Race is whether the race detector is built in (see race.go).
const Race = false
