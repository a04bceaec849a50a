package cgroup_test

import "testing"

// The sampler reads usage once per tick; these put a number on that.

func BenchmarkLiveUsage(b *testing.B) {
	g := self(b)
	for b.Loop() {
		if _, err := g.Usage(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLiveOOM(b *testing.B) {
	g := self(b)
	for b.Loop() {
		if _, err := g.OOM(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLiveLimit(b *testing.B) {
	g := self(b)
	for b.Loop() {
		if _, err := g.Limit(); err != nil {
			b.Fatal(err)
		}
	}
}
