package zmtp_test

import (
	"bytes"
	"errors"
	"fmt"

	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// The bounds on peers that have not shown the key (limits.go). A message
// whose first frame is "signed" stands for one signed with the key: the
// handler's verdict is all a Router knows of signatures.

// proof is the proof time of the tests that wait for it: long enough that
// a peer meant to prove itself at once does so first on a loaded machine.
const proof = 1500 * time.Millisecond

// judge is a Router handler that echoes every message and calls those
// that start with "signed" verified.
func judge(t *testing.T) func(r *zmtp.Router, frames [][]byte) bool {
	return func(r *zmtp.Router, frames [][]byte) bool {
		if err := r.Send(frames); err != nil {
			t.Errorf("Router.Send: %v", err)
		}
		return len(frames) > 1 && string(frames[1]) == "signed"
	}
}

// dialIdle connects a peer of sockType that shakes hands and then says
// nothing, closed at the end of the test.
func dialIdle(t *testing.T, ep, sockType, identity string) *zmtp.RawConn {
	t.Helper()
	c, err := zmtp.DialRaw(ep, sockType, []byte(identity), patience)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByProxy waits until the socket has closed c; the test fails if it
// has not within patience.
func closedByProxy(t *testing.T, c *zmtp.RawConn, what string) {
	t.Helper()
	_ = c.Conn().SetReadDeadline(time.Now().Add(patience))
	for {
		_, err := c.ReadMsg()
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: still open after %v", what, patience)
		}
		return // EOF or a reset
	}
}

// stillOpen checks that c's messages still come back from an echoing
// socket.
func stillOpen(t *testing.T, c *zmtp.RawConn, body string) {
	t.Helper()
	_ = c.Conn().SetDeadline(time.Now().Add(patience))
	if err := c.WriteMsg(msg(body)); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	got, err := c.ReadMsg()
	if err != nil || len(got) != 1 || string(got[0]) != body {
		t.Fatalf("%s: got %q, %v", body, got, err)
	}
	_ = c.Conn().SetDeadline(time.Time{})
}

// linesSaying are the lines of log that contain s.
func linesSaying(log *logLines, s string) []string {
	var out []string
	for _, l := range log.get() {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// TestOldestUnprovenMakesRoom: a socket full of peers that have shown
// nothing closes the oldest of them for a newcomer, so a flood of idle
// connections cannot keep a frontend out; one that has sent a verified
// message keeps its slot.
func TestOldestUnprovenMakesRoom(t *testing.T) {
	var log logLines
	r := listenJudgingRouter(t, bindEndpoint(t, "tcp"), log.log, judge(t), zmtp.WithLimits(zmtp.LimitsOf(3, time.Hour, 0)))
	kept := dialIdle(t, r.Endpoint(), "DEALER", "kept")
	stillOpen(t, kept, "signed")
	// The socket takes a peer as proven once the handler has returned,
	// which is after the echo that stillOpen reads.
	waitFor(t, "the signed peer proven", func() bool { return r.Unproven() == 0 })
	first := dialIdle(t, r.Endpoint(), "DEALER", "")
	second := dialIdle(t, r.Endpoint(), "DEALER", "")
	waitFor(t, "three peers", func() bool { return r.Conns() == 3 })
	third := dialIdle(t, r.Endpoint(), "DEALER", "")
	closedByProxy(t, first, "the oldest unproven peer")
	fourth := dialIdle(t, r.Endpoint(), "DEALER", "")
	closedByProxy(t, second, "the next oldest")
	stillOpen(t, kept, "signed again")
	stillOpen(t, third, "third")
	stillOpen(t, fourth, "fourth")
	if lines := linesSaying(&log, "closed to make room"); len(lines) != 1 {
		t.Errorf("log %q: want one line for both, the second counted (rate-limited)", log.get())
	}
}

// TestProvenPeersKeepTheirSlots: when every peer has sent a verified
// message, a newcomer is refused and said so, and the peers go on.
func TestProvenPeersKeepTheirSlots(t *testing.T) {
	var log logLines
	r := listenJudgingRouter(t, bindEndpoint(t, "tcp"), log.log, judge(t), zmtp.WithLimits(zmtp.LimitsOf(2, time.Hour, 0)))
	// The judge echoes a message before its verdict proves the peer; the
	// echo of a second message, read after that verdict, says it has
	// (without it, a newcomer once found b unproven and took its slot).
	a := dialIdle(t, r.Endpoint(), "DEALER", "a")
	stillOpen(t, a, "signed")
	stillOpen(t, a, "a")
	b := dialIdle(t, r.Endpoint(), "DEALER", "b")
	stillOpen(t, b, "signed")
	stillOpen(t, b, "b")
	if c, err := zmtp.DialRaw(r.Endpoint(), "DEALER", nil, patience); err == nil {
		closedByProxy(t, c, "a newcomer to a full socket")
		c.Close()
	}
	waitFor(t, "the refusal logged", func() bool { return len(linesSaying(&log, "a new one refused")) == 1 })
	stillOpen(t, a, "a")
	stillOpen(t, b, "b")
}

// TestUnprovenPeersTimeOut: a peer that shakes hands and then sends
// nothing, or only what is not verified, is closed at the proof time,
// unless it is among the first unproven peers of its socket (a
// KernelManager's silent control connection); one that has sent a
// verified message, or whose identity has on another socket of the same
// kernel, stays.
func TestUnprovenPeersTimeOut(t *testing.T) {
	var log logLines
	limits := zmtp.WithLimits(zmtp.LimitsOf(16, proof, 1))
	shell := listenJudgingRouter(t, bindEndpoint(t, "tcp"), log.log, judge(t), limits)
	stdin := listenJudgingRouter(t, bindEndpoint(t, "tcp"), log.log, judge(t), limits)
	manager := dialIdle(t, shell.Endpoint(), "DEALER", "")
	first := dialIdle(t, stdin.Endpoint(), "DEALER", "")
	waitFor(t, "the first peers", func() bool { return shell.Conns() == 1 && stdin.Conns() == 1 })
	idle := dialIdle(t, shell.Endpoint(), "DEALER", "idle")
	unsigned := dialIdle(t, shell.Endpoint(), "DEALER", "unsigned")
	signed := dialIdle(t, shell.Endpoint(), "DEALER", "session")
	vouched := dialIdle(t, stdin.Endpoint(), "DEALER", "session")
	stranger := dialIdle(t, stdin.Endpoint(), "DEALER", "stranger")
	stillOpen(t, unsigned, "unsigned")
	stillOpen(t, signed, "signed")
	started := time.Now()
	closedByProxy(t, idle, "a peer that says nothing")
	closedByProxy(t, unsigned, "a peer that sends no verified message")
	closedByProxy(t, stranger, "a silent stdin peer with an identity not verified")
	if waited := time.Since(started); waited < proof/2 {
		t.Errorf("closed %v after the messages: before the proof time (%v)", waited, proof)
	}
	time.Sleep(proof) // past the proof time of every connection
	stillOpen(t, signed, "signed")
	stillOpen(t, vouched, "vouched")
	stillOpen(t, manager, "the first unproven peer of shell")
	stillOpen(t, first, "the first unproven peer of stdin")
	if lines := linesSaying(&log, "sent no verified message within 1.5s"); len(lines) == 0 {
		t.Errorf("log %q: want a line saying why", log.get())
	}
}

// TestUnverifiedMessagesAreBounded: before its first verified message a
// peer may send a message of MaxUnverified at most, frames and partial
// messages counted together; after it, any size.
func TestUnverifiedMessagesAreBounded(t *testing.T) {
	var log logLines
	r := listenJudgingRouter(t, bindEndpoint(t, "tcp"), log.log, judge(t))
	big := bytes.Repeat([]byte("b"), zmtp.MaxUnverified+1)

	first := dialIdle(t, r.Endpoint(), "DEALER", "")
	_ = first.WriteMsg([][]byte{[]byte("unsigned"), big})
	closedByProxy(t, first, "a first message above the budget")

	partial := dialIdle(t, r.Endpoint(), "DEALER", "")
	quarter := make([]byte, zmtp.MaxUnverified/4)
	for range 5 {
		_, _ = partial.Conn().Write(append(zmtp.FrameHeader(true, uint64(len(quarter))), quarter...))
	}
	closedByProxy(t, partial, "a message whose last frame never comes")

	trusted := dialIdle(t, r.Endpoint(), "DEALER", "")
	stillOpen(t, trusted, "signed")
	_ = trusted.Conn().SetDeadline(time.Now().Add(patience))
	huge := bytes.Repeat([]byte("h"), 64<<20)
	if err := trusted.WriteMsg([][]byte{[]byte("signed"), huge}); err != nil {
		t.Fatal(err)
	}
	got, err := trusted.ReadMsg()
	if err != nil || len(got) != 2 || !bytes.Equal(got[1], huge) {
		t.Fatalf("64 MiB after a verified message: %d frames back, %v", len(got), err)
	}
	// Both were dropped for the same kind of reason: one line, the second
	// counted in the next line of that kind.
	if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], "may send 4194304") {
		t.Errorf("log %q: want one line saying why", lines)
	}
}

// TestSubscriptionsAreBounded: a subscription proves a subscriber; one
// longer than any topic a kernel publishes on, or past what one
// subscriber may hold, is ignored and said so; a SUB that sends more than
// a subscription's worth is dropped.
func TestSubscriptionsAreBounded(t *testing.T) {
	var log logLines
	p, err := zmtp.ListenPub(bindEndpoint(t, "tcp"), nil, log.log, zmtp.WithLimits(zmtp.LimitsOf(8, proof, 0)))
	p = closedAtEnd(t, p, err)
	sub := dialIdle(t, p.Endpoint(), "SUB", "")
	subscribe := func(topic string) {
		if err := sub.WriteMsg([][]byte{append([]byte{1}, topic...)}); err != nil {
			t.Fatal(err)
		}
	}
	subscribe(strings.Repeat("x", zmtp.MaxTopic+1))
	waitFor(t, "the long topic refused", func() bool { return len(linesSaying(&log, "above the 256-byte limit")) == 1 })
	n := zmtp.MaxTopicBytes / zmtp.MaxTopic
	for i := range n {
		subscribe(fmt.Sprintf("%0*d", zmtp.MaxTopic, i))
	}
	subscribe("one more")
	waitFor(t, "the subscription past the bound refused", func() bool { return len(linesSaying(&log, "one more ignored")) == 1 })
	if _, matching := p.Subscribers("one more"); matching != 0 {
		t.Error("the subscription past the bound was taken")
	}
	if _, matching := p.Subscribers(fmt.Sprintf("%0*d", zmtp.MaxTopic, n-1)); matching != 1 {
		t.Error("the last subscription within the bound is missing")
	}
	time.Sleep(2 * proof)
	if conns, _ := p.Subscribers(""); conns != 1 {
		t.Errorf("%d subscribers after the proof time; the one that subscribed must stay", conns)
	}

	flood := dialIdle(t, p.Endpoint(), "SUB", "")
	_ = flood.WriteMsg([][]byte{append([]byte{1}, make([]byte, 1<<20)...)})
	closedByProxy(t, flood, "a SUB that sends a 1 MiB subscription")
}

// TestIdentityInLinesIsShort: a peer that reuses another's identity of
// 255 bytes gets a line with the identity's start, not all of it.
func TestIdentityInLinesIsShort(t *testing.T) {
	var log logLines
	r := listenRouter(t, bindEndpoint(t, "tcp"), log.log, echo(t))
	id := strings.Repeat("i", 255)
	owner := dialIdle(t, r.Endpoint(), "DEALER", id)
	stillOpen(t, owner, "owner")
	dialIdle(t, r.Endpoint(), "DEALER", id)
	waitFor(t, "the reuse logged", func() bool { return len(log.get()) == 1 })
	if line := log.get()[0]; strings.Contains(line, id) || !strings.Contains(line, "(255 bytes)") {
		t.Errorf("line %q: want the identity cut short, with its length", line)
	}
}

// TestIdlePeerCostsOneGoroutine: a peer that shakes hands and says
// nothing costs its reader only, not also a writer for messages it never
// gets, and a read buffer of 4 KiB, not 64.
func TestIdlePeerCostsOneGoroutine(t *testing.T) {
	const peers = 200
	r := listenRouter(t, bindEndpoint(t, "tcp"), testLog(t), echo(t))
	before := runtime.NumGoroutine()
	for range peers {
		dialIdle(t, r.Endpoint(), "DEALER", "")
	}
	waitFor(t, "the peers", func() bool { return r.Conns() == peers })
	if grew := runtime.NumGoroutine() - before; grew > peers+10 {
		t.Errorf("%d idle peers: %d more goroutines", peers, grew)
	}
}

// TestEchoPeersProveByPing: a heartbeat peer that pings stays past the
// proof time; one that never does is closed; a ping is held to an
// untrusted message's budget.
func TestEchoPeersProveByPing(t *testing.T) {
	e, err := zmtp.ListenEcho(bindEndpoint(t, "tcp"), testLog(t), zmtp.WithLimits(zmtp.LimitsOf(8, proof, 0)))
	e = closedAtEnd(t, e, err)
	pinger := dialIdle(t, e.Endpoint(), "DEALER", "")
	silent := dialIdle(t, e.Endpoint(), "DEALER", "")
	stillOpen(t, pinger, "ping")
	closedByProxy(t, silent, "a heartbeat peer that never pings")
	time.Sleep(proof)
	stillOpen(t, pinger, "ping again")
	big := dialIdle(t, e.Endpoint(), "DEALER", "")
	stillOpen(t, big, strings.Repeat("b", 100_000)) // ipykernel's heartbeat echoes it too
	_ = big.WriteMsg([][]byte{make([]byte, zmtp.MaxUnverified+1)})
	closedByProxy(t, big, "a ping above MaxUnverified")
}
