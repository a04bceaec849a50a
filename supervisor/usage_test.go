package supervisor

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// TestUsageRequestsFlood: 50,000 usage_requests as fast as they come (a
// key holder's client that never reads its answers) are measured by one
// goroutine; every one is answered, by a measurement or by a busy error;
// the busy answers get a line now and then, not one each. A goroutine per
// request held 25,000 of them and 427 MiB here.
func TestUsageRequestsFlood(t *testing.T) {
	const requests = 50_000
	var measured, usage, busy atomic.Int64
	var lines []string
	var mu sync.Mutex
	desk := newUsageDesk(func() usageReply {
		measured.Add(1)
		time.Sleep(2 * time.Millisecond) // a measurement reads /proc, and may wait for a sample
		return usageReply{Hostname: "here"}
	}, func(_ *proxy.Request, content any) {
		switch c := content.(type) {
		case usageReply:
			usage.Add(1)
		case usageBusy:
			if c.Status != "error" || !strings.Contains(c.Evalue, "busy") {
				t.Errorf("busy answer %+v", c)
			}
			busy.Add(1)
		default:
			t.Errorf("answer of type %T", content)
		}
	}, func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, format)
	})
	before := runtime.NumGoroutine()
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		desk.serve(stop)
		close(served)
	}()
	peak := 0
	for i := range requests {
		desk.ask(&proxy.Request{MsgID: "r"})
		if i%1000 == 0 {
			peak = max(peak, runtime.NumGoroutine()-before)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for usage.Load()+busy.Load() < requests && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-served
	if got := usage.Load() + busy.Load(); got != requests {
		t.Fatalf("%d requests, %d answered (%d measured, %d busy)", requests, got, usage.Load(), busy.Load())
	}
	if peak > 2 {
		t.Errorf("%d more goroutines while the requests came", peak)
	}
	if measured.Load() >= usage.Load() {
		t.Errorf("%d measurements for %d usage answers: one must answer every request that waited for it", measured.Load(), usage.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) > 2 {
		t.Errorf("%d lines for %d busy answers", len(lines), busy.Load())
	}
}
