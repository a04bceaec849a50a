package ledger

import (
	"testing"
	"time"
)

func TestHistoryKeepsOnePointAStep(t *testing.T) {
	l := New(Tree, 0)
	t0 := time.Unix(1000, 0)
	// A cell sampled every 10 ms for 3 s, growing 1 MiB each time.
	for i := range 300 {
		l.Observe(Memory{Tree: uint64(i) << 20}, t0.Add(time.Duration(i)*10*time.Millisecond))
	}
	h := l.History()
	if n := len(h); n < 6 || n > 8 {
		t.Fatalf("%d points for 3 s at one per %v", n, HistoryStep)
	}
	for i := 1; i < len(h)-1; i++ {
		if gap := h[i].At.Sub(h[i-1].At); gap < HistoryStep-10*time.Millisecond {
			t.Errorf("points %d and %d are %v apart", i-1, i, gap)
		}
	}
	if last := h[len(h)-1]; last.Memory.Tree != 299<<20 {
		t.Errorf("the last point is %d MiB, not the latest measurement", last.Memory.Tree>>20)
	}
}

func TestHistoryIsBounded(t *testing.T) {
	l := New(Tree, 0)
	t0 := time.Unix(1000, 0)
	// An hour, a sample a second: only the last HistorySpan is kept, and
	// at most HistoryPoints of it.
	for i := range 3600 {
		l.Observe(Memory{Tree: uint64(i)}, t0.Add(time.Duration(i)*time.Second))
	}
	h := l.History()
	if len(h) > HistoryPoints {
		t.Fatalf("%d points, over %d", len(h), HistoryPoints)
	}
	if span := h[len(h)-1].At.Sub(h[0].At); span > HistorySpan {
		t.Errorf("the history spans %v", span)
	}
	// Ten minutes, a sample every 2 s: all of it.
	l = New(Tree, 0)
	for i := range 301 {
		l.Observe(Memory{Tree: uint64(i)}, t0.Add(time.Duration(i)*2*time.Second))
	}
	if h := l.History(); len(h) != 301 || h[0].Memory.Tree != 0 {
		t.Errorf("%d points from %d: ten minutes at one per 2 s are 301, from the first", len(h), h[0].Memory.Tree)
	}
	h[0].Memory.Tree = 42 // a copy
	if l.History()[0].Memory.Tree == 42 {
		t.Error("History returns the ledger's own slice")
	}
}
