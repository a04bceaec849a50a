package owner

import (
	"testing"
	"time"
)

// Functions run one at a time, in the order they were posted, and Post
// returns while the loop is busy with something that blocks.
func TestOneAtATimeInOrder(t *testing.T) {
	l := New()
	defer l.Close()
	release := make(chan struct{})
	l.Post(func() { <-release })
	var order []int // touched only on the loop
	posted := make(chan struct{})
	go func() {
		for i := range 1000 {
			l.Post(func() { order = append(order, i) })
		}
		close(posted)
	}()
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("Post waited for a busy loop")
	}
	if l.Idle() {
		t.Fatal("idle with 1,001 functions posted")
	}
	close(release)
	var n int
	l.Do(func() { n = len(order) })
	if n != 1000 {
		t.Fatalf("%d functions ran before Do's, want 1000", n)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("function %d ran in place %d", v, i)
		}
	}
	if !l.Idle() {
		t.Fatal("not idle after everything ran")
	}
}

// After Close nothing runs, and Do does not wait for what never will.
func TestAfterClose(t *testing.T) {
	l := New()
	ran := false
	l.Do(func() {})
	l.Close()
	l.Do(func() {}) // may be queued before the close took effect: it runs
	l.Do(func() { ran = true })
	l.Post(func() { ran = true })
	if ran {
		t.Fatal("a function ran after Close")
	}
}
