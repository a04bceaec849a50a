package zmtp

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// bigMessage is the size from which a message's buffers go back to the
// operating system as soon as it is written. Left to Go's background
// scavenger, the 50 MB of a big cell output went back in some 70 madvise
// calls spread over the next cells, each waking the runtime's monitor
// thread from its sleep (strace over the 50 executes after one: 52
// nanosleeps against 7 without the output before them).
const bigMessage = 16 << 20

// releaseEvery bounds how often a release runs: a full collection each
// time, which a kernel streaming big outputs should not pay per output.
const releaseEvery = time.Second

var (
	releasing   atomic.Bool  // a release is under way
	lastRelease atomic.Int64 // when the latest began, in Unix nanoseconds
)

// written is told the size of each message once it has left whole. After
// a big one it hands the memory that is now free back to the system, on a
// goroutine of its own: the writer goes on at once.
func written(size int) {
	if size < bigMessage {
		return
	}
	now := time.Now().UnixNano()
	if now-lastRelease.Load() < int64(releaseEvery) || !releasing.CompareAndSwap(false, true) {
		return // the scavenger takes what this one leaves
	}
	lastRelease.Store(now)
	go func() {
		defer releasing.Store(false)
		debug.FreeOSMemory()
	}()
}

// msgSize is the bytes of frames.
func msgSize(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	return n
}
