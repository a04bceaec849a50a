package proxy_test

// The forwarding core against the fake kernel (package proxytest): replies
// without identities, a request the kernel never answers, a kernel that
// goes away mid-cell, the proxy's own messages into a cell, and an idle
// held for what must go before it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/client"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/proxytest"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// recorder is hooks that let everything through, as passHooks do, and
// record the cells frontends asked for and the requests the proxy could
// not serve.
type recorder struct {
	asked    chan string // msg_id of each execute_request
	busy     chan string // msg_id of each execute_request the kernel said busy for
	unserved chan *proxy.Request
}

func newRecorder() *recorder {
	return &recorder{asked: make(chan string, 16), busy: make(chan string, 16), unserved: make(chan *proxy.Request, 16)}
}

func (r *recorder) FromFrontend(h *proxy.Request, _ *wire.Message) bool {
	if h.Kind == wire.ExecuteRequest {
		r.asked <- h.MsgID
	}
	return true
}

func (r *recorder) FromKernel(_ wire.Channel, _ *wire.Message, _ wire.Header, asked *proxy.Request, state string) <-chan struct{} {
	if state == "busy" && asked != nil && asked.Kind == wire.ExecuteRequest {
		r.busy <- asked.MsgID
	}
	return nil
}

func (r *recorder) Unserved(req *proxy.Request) { r.unserved <- req }

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(proxytest.Patience):
		t.Fatalf("no %s within %s", what, proxytest.Patience)
		panic("unreachable")
	}
}

// cell is an execute running on a frontend in the background.
type cell struct {
	done           chan struct{}
	reply          *client.Reply
	err            error
	stdout, stderr strings.Builder
}

func startCell(c *client.Client, code string) *cell {
	e := &cell{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		ctx, cancel := context.WithTimeout(context.Background(), proxytest.Patience)
		defer cancel()
		e.reply, e.err = c.Execute(ctx, code, client.ExecuteOptions{}, func(m *client.Message) {
			var s struct{ Name, Text string }
			if m.Header.MsgType == "stream" && json.Unmarshal(m.Content, &s) == nil {
				map[string]*strings.Builder{"stdout": &e.stdout, "stderr": &e.stderr}[s.Name].WriteString(s.Text)
			}
		})
	}()
	return e
}

func (e *cell) wait(t *testing.T) {
	t.Helper()
	receive(t, e.done, "end of the cell")
	if e.err != nil {
		t.Fatal(e.err)
	}
}

// TestRepliesWithoutIdentitiesReachTheirFrontends: a kernel that sends its
// replies without the identity frames of the request (Deno's) still has
// each reply reach the frontend that asked, by the request it answers.
func TestRepliesWithoutIdentitiesReachTheirFrontends(t *testing.T) {
	k := proxytest.StartKernel(t)
	k.NoIdents.Store(true)
	p := proxytest.StartProxy(t, k)
	var wg sync.WaitGroup
	for i := range 3 {
		c := p.Dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("frontend %d\n", i)
			for range 5 {
				if out, err := tryExecute(c, "print "+strings.TrimSuffix(want, "\n")); err != nil || out != want {
					t.Errorf("frontend %d: %q, %v\n--- the proxy's log:\n%s", i, out, err, p.Log)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestTheProxyAnswersACellTheKernelNeverWill: a cell the kernel never
// answers stays in flight, and the proxy can write into it and answer it
// (what the guard does for a kernel that died in it), so its frontend
// does not wait for ever.
func TestTheProxyAnswersACellTheKernelNeverWill(t *testing.T) {
	hooks := newRecorder()
	p := proxytest.StartProxyHooks(t, proxytest.StartKernel(t), hooks)
	e := startCell(p.Dial(t), "hang")
	id := receive(t, hooks.asked, "execute_request")
	var r *proxy.Request
	for deadline := time.Now().Add(proxytest.Patience); ; time.Sleep(time.Millisecond) {
		var ok bool
		if r, ok = p.Unanswered(id); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hanging cell is not in flight")
		}
	}
	if r.MsgType != "execute_request" || r.ReplyType() != "execute_reply" {
		t.Fatalf("in flight: %+v", r)
	}
	if err := p.Stream(r.Header, "stderr", "jupyter-guard: a note\n"); err != nil {
		t.Fatal(err)
	}
	answer(t, p, r, e, "KernelDied")
	if e.stderr.String() != "jupyter-guard: a note\n" {
		t.Fatalf("the cell's stderr %q, want the proxy's note", e.stderr.String())
	}
	if _, ok := p.Unanswered(id); ok {
		t.Error("the answered cell is still in flight")
	}
}

// TestAKernelGoneMidCell: detaching a kernel stuck in a cell hands back
// the cell as unanswered and busy, for the proxy to answer; once GiveUp
// says no kernel is coming, a new request goes to Hooks.Unserved instead
// of waiting; after Hold, requests wait again, and the next kernel serves
// them.
func TestAKernelGoneMidCell(t *testing.T) {
	hooks := newRecorder()
	k := proxytest.StartKernel(t)
	p := proxytest.StartProxyHooks(t, k, hooks)
	c := p.Dial(t)
	hung := startCell(c, "hang")
	id := receive(t, hooks.asked, "execute_request")
	if busy := receive(t, hooks.busy, "busy"); busy != id {
		t.Fatalf("busy for %s, want the hanging cell %s", busy, id)
	}
	pending, busy := p.Detach(0)
	if len(pending) != 1 || pending[0].MsgID != id {
		t.Fatalf("unanswered after the kernel left: %+v", pending)
	}
	if len(busy) != 1 {
		t.Fatalf("busy after the kernel left: %d requests", len(busy))
	}
	if busy[0].MsgID != id {
		t.Fatalf("busy after the kernel left: %s, want %s", busy[0].MsgID, id)
	}
	answer(t, p, pending[0], hung, "KernelDied")

	p.GiveUp()
	later := startCell(c, "print late")
	receive(t, hooks.asked, "execute_request")
	r := receive(t, hooks.unserved, "unserved request")
	if r.MsgType != "execute_request" {
		t.Fatalf("unserved: %+v", r)
	}
	answer(t, p, r, later, "NoKernel")

	p.Hold()
	waiting := startCell(c, "print served")
	receive(t, hooks.asked, "execute_request")
	select {
	case r := <-hooks.unserved:
		t.Fatalf("after Hold a request went unserved: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	ctx, cancel := context.WithTimeout(context.Background(), proxytest.Patience)
	defer cancel()
	if err := p.Attach(ctx, k.Restarted(t).Conn, func() {}); err != nil {
		t.Fatal(err)
	}
	waiting.wait(t)
	if waiting.reply.Status != "ok" {
		t.Fatalf("the request that waited for the next kernel ended %+v", waiting.reply)
	}
	if p.KernelInfo() == nil {
		t.Error("no kernel_info from the attached kernel")
	}
}

// answer ends r, the request of cell e, with an error reply named ename
// and an idle, as the guard answers a cell no kernel will, and waits for
// the cell to end so.
func answer(t *testing.T, p *proxytest.Proxy, r *proxy.Request, e *cell, ename string) {
	t.Helper()
	if err := p.Reply(r, map[string]any{"status": "error", "execution_count": 0, "ename": ename, "evalue": "", "traceback": []string{}}); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(r.Header, "status", map[string]string{"execution_state": "idle"}); err != nil {
		t.Fatal(err)
	}
	e.wait(t)
	if e.reply.Status != "error" || e.reply.Ename != ename {
		t.Fatalf("the cell ended %+v, want %s", e.reply, ename)
	}
}

// holder is hooks that hold the idle of the first cell until release is
// closed, and count the stream messages the proxy reads.
type holder struct {
	release chan struct{}
	held    atomic.Bool
	streams atomic.Int64
}

func (*holder) FromFrontend(*proxy.Request, *wire.Message) bool { return true }

func (h *holder) FromKernel(_ wire.Channel, _ *wire.Message, m wire.Header, asked *proxy.Request, state string) <-chan struct{} {
	if m.MsgType == "stream" {
		h.streams.Add(1)
	}
	if state == "idle" && asked != nil && asked.Kind == wire.ExecuteRequest && h.held.CompareAndSwap(false, true) {
		return h.release
	}
	return nil
}

func (*holder) Unserved(*proxy.Request) {}

// TestAHeldIdleHoldsTheOutputAfterItNotTheKernel: while a cell's idle is
// held (the guard's note for the cell is being written), the kernel's
// iopub is still read: the next cell's 500 lines reach the proxy at once,
// and go to their frontend after the held idle, in order, none lost.
func TestAHeldIdleHoldsTheOutputAfterItNotTheKernel(t *testing.T) {
	hooks := &holder{release: make(chan struct{})}
	p := proxytest.StartProxyHooks(t, proxytest.StartKernel(t), hooks)
	c1, c2 := p.Dial(t), p.Dial(t) // a frontend's handshake waits for iopub too
	first := startCell(c1, "print first")
	for deadline := time.Now().Add(proxytest.Patience); !hooks.held.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first cell's idle never came")
		}
	}
	second := startCell(c2, "lines 500")
	for deadline := time.Now().Add(proxytest.Patience); hooks.streams.Load() < 501; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy read %d of the 501 stream messages while an idle was held", hooks.streams.Load())
		}
	}
	select {
	case <-first.done:
		t.Fatal("the first cell ended while its idle was held")
	case <-second.done:
		t.Fatal("the second cell ended while the idle before its output was held")
	case <-time.After(20 * time.Millisecond):
	}
	close(hooks.release)
	first.wait(t)
	second.wait(t)
	var want strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if first.stdout.String() != "first\n" || second.stdout.String() != want.String() {
		t.Fatalf("stdout %q and %d bytes, want %q and the 500 lines in order", first.stdout.String(), second.stdout.Len(), "first\n")
	}
}
