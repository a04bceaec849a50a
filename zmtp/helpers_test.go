package zmtp_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// patience is how long a test waits for what should come at once: only a
// hang or a lost message takes this long, and then the test fails.
const patience = 5 * time.Second

// retry is how often a dialling test peer tries again.
const retry = 5 * time.Millisecond

var schemes = []string{"tcp", "ipc"}

// bindEndpoint is where a socket under test binds for scheme; Endpoint()
// then says where it listens.
func bindEndpoint(t *testing.T, scheme string) string {
	if scheme == "tcp" {
		return "tcp://127.0.0.1:0"
	}
	return "ipc://" + zmqpeer.SocketPath(t)
}

// forSchemes runs test once for tcp and once for ipc.
func forSchemes(t *testing.T, test func(t *testing.T, scheme string)) {
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) { test(t, scheme) })
	}
}

// logLines is a Logger that keeps its lines, for tests that count them.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// testLog is the Logger of tests that expect no trouble: its lines show
// with the test's output when it fails.
func testLog(t *testing.T) zmtp.Logger { return t.Logf }

// inbox is a Handler that passes messages to the test. It never blocks
// the connection: a test that lets it fill up fails.
type inbox struct {
	t  *testing.T
	ch chan [][]byte
}

func newInbox(t *testing.T) *inbox { return &inbox{t: t, ch: make(chan [][]byte, 256)} }

func (in *inbox) handle(frames [][]byte) {
	select {
	case in.ch <- frames:
	default:
		in.t.Errorf("inbox full: a message was dropped")
	}
}

// next is the next message, or the test fails after patience.
func (in *inbox) next() [][]byte {
	in.t.Helper()
	select {
	case f := <-in.ch:
		return f
	case <-time.After(patience):
		in.t.Fatalf("no message within %v", patience)
		return nil
	}
}

// listenRouter binds a Router at ep whose handler gets the Router itself
// too, to answer with. Every message counts as verified, as a frontend's
// with the key would: the tests of the bounds on peers that have not shown
// the key give their own verdict (listenJudgingRouter).
func listenRouter(t *testing.T, ep string, log zmtp.Logger, handle func(r *zmtp.Router, frames [][]byte), opts ...zmtp.Option) *zmtp.Router {
	t.Helper()
	return listenJudgingRouter(t, ep, log, func(r *zmtp.Router, frames [][]byte) bool {
		handle(r, frames)
		return true
	}, opts...)
}

// listenJudgingRouter is listenRouter with a handler that gives the
// verdict.
func listenJudgingRouter(t *testing.T, ep string, log zmtp.Logger, handle func(r *zmtp.Router, frames [][]byte) bool, opts ...zmtp.Option) *zmtp.Router {
	t.Helper()
	ready := make(chan struct{})
	var r *zmtp.Router
	r, err := zmtp.ListenRouter(ep, func(frames [][]byte) bool {
		<-ready // r is set
		return handle(r, frames)
	}, log, opts...)
	close(ready)
	return closedAtEnd(t, r, err)
}

// echo answers each message to its sender, as the proxy answers a
// frontend: through Router.Send, routed by the identity frame.
func echo(t *testing.T) func(r *zmtp.Router, frames [][]byte) {
	return func(r *zmtp.Router, frames [][]byte) {
		if err := r.Send(frames); err != nil {
			t.Errorf("Router.Send: %v", err)
		}
	}
}

func listenEcho(t *testing.T, ep string, opts ...zmtp.Option) *zmtp.Echo {
	t.Helper()
	e, err := zmtp.ListenEcho(ep, testLog(t), opts...)
	return closedAtEnd(t, e, err)
}

func listenPub(t *testing.T, ep string, opts ...zmtp.Option) *zmtp.Pub {
	t.Helper()
	p, err := zmtp.ListenPub(ep, nil, testLog(t), opts...)
	return closedAtEnd(t, p, err)
}

// closedAtEnd returns the socket a Listen function made, closing it at
// the end of the test, or fails the test with the Listen's error.
func closedAtEnd[S interface{ Close() error }](t *testing.T, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dialPeer dials with dial, giving up after patience; what the peer
// receives goes to the returned inbox. The peer is closed at the end of
// the test.
func dialPeer(t *testing.T, dial func(context.Context, zmtp.Handler) (*zmtp.Peer, error)) (*zmtp.Peer, *inbox) {
	t.Helper()
	in := newInbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	p, err := dial(ctx, in.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, in
}

// dialDealer connects a DEALER with identity id (none if empty) to ep.
func dialDealer(t *testing.T, ep, id string, opts ...zmtp.Option) (*zmtp.Peer, *inbox) {
	t.Helper()
	var identity []byte
	if id != "" {
		identity = []byte(id)
	}
	return dialPeer(t, func(ctx context.Context, h zmtp.Handler) (*zmtp.Peer, error) {
		return zmtp.DialDealer(ctx, ep, identity, retry, h, opts...)
	})
}

// dialSub connects a SUB, subscribed to everything, to ep.
func dialSub(t *testing.T, ep string, opts ...zmtp.Option) (*zmtp.Peer, *inbox) {
	t.Helper()
	return dialPeer(t, func(ctx context.Context, h zmtp.Handler) (*zmtp.Peer, error) {
		return zmtp.DialSub(ctx, ep, retry, h, opts...)
	})
}

// roundTrip sends body from d and expects it back on in: the path through
// the socket under test works.
func roundTrip(t *testing.T, d *zmtp.Peer, in *inbox, body string) {
	t.Helper()
	if err := d.Send([][]byte{[]byte(body)}); err != nil {
		t.Fatal(err)
	}
	if got := in.next(); len(got) != 1 || string(got[0]) != body {
		t.Fatalf("sent %q, got back %q", body, got)
	}
}

// waitFor polls cond until it holds; a test fails if it does not within
// patience. It waits for what happens on another goroutine, such as a
// subscription arriving, and asserts nothing about how long that takes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, patience)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitSubscribed waits until n of the Pub's subscribers would get a
// message on topic.
func waitSubscribed(t *testing.T, p *zmtp.Pub, topic string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d subscribers to %q", n, topic), func() bool {
		_, matching := p.Subscribers(topic)
		return matching == n
	})
}

func sameFrames(got, want [][]byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			return fmt.Errorf("frame %d: got %d bytes %q, want %d bytes %q",
				i, len(got[i]), clip(got[i]), len(want[i]), clip(want[i]))
		}
	}
	return nil
}

// clip keeps a frame's start, for messages about large ones.
func clip(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "…"
	}
	return string(b)
}

// msg is a message of string frames.
func msg(frames ...string) [][]byte {
	m := make([][]byte, len(frames))
	for i, f := range frames {
		m[i] = []byte(f)
	}
	return m
}

// randomFrames are frames of the given sizes, of random bytes: a frame
// out of place or cut short does not compare equal by chance.
func randomFrames(src *rand.ChaCha8, sizes ...int) [][]byte {
	m := make([][]byte, len(sizes))
	for i, n := range sizes {
		m[i] = make([]byte, n)
		src.Read(m[i])
	}
	return m
}
