package proxy

import (
	"runtime/debug"
	"sync"
	"time"
)

// bigMessage is the size from which a forwarded message is worth giving
// back to the OS once it is gone.
const bigMessage = 8 << 20

// releaser returns the memory of big forwarded messages to the OS soon
// after the last one: Go's scavenger would keep a 50 MB output's pages for
// minutes, and the proxy should stay small beside the kernel it guards.
type releaser struct {
	mu    sync.Mutex
	timer *time.Timer
}

// forwarded notes a message of n bytes that has left the proxy.
func (r *releaser) forwarded(n int) {
	if n < bigMessage {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(250*time.Millisecond, debug.FreeOSMemory)
		return
	}
	r.timer.Reset(250 * time.Millisecond) // wait for the burst to end
}

func frameBytes(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	return n
}
