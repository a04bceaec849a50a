package zmtp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/sysio"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// stuckMessages is well past what a stalled peer's socket buffers take
// (about 20 MB of 1 KB messages) and past the high-water mark.
const stuckMessages = 20000

// TestASubscriberThatDoesNotReadCostsOnlyItself: a subscriber that never
// reads has its messages dropped past the high-water mark, once logged;
// Send never waits on it, so a subscriber that reads gets every message in
// order. Before outboxes, Send wrote to each subscriber in turn and waited
// on the stuck one once its socket buffers were full.
func TestASubscriberThatDoesNotReadCostsOnlyItself(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var lines logLines
		p, err := zmtp.ListenPub(bindEndpoint(t, scheme), nil, lines.log)
		p = closedAtEnd(t, p, err)
		stuck := dialRaw(t, p.Endpoint())
		stuck.handshake("SUB", 1)
		stuck.write(zmtp.Command("SUBSCRIBE", nil))
		_, in := dialSub(t, p.Endpoint())
		waitSubscribed(t, p, "t", 2)

		body := strings.Repeat("x", 1024)
		for i := range stuckMessages {
			m := msg("t", body, strconv.Itoa(i))
			if err := p.Send(m); err != nil {
				t.Fatal(err)
			}
			if err := sameFrames(in.next(), m); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		checkDropsLogged(t, &lines)
	})
}

// TestARouterPeerThatDoesNotReadCostsOnlyItself: the same for the shell,
// control and stdin sockets: replies for a frontend that does not read
// are queued and dropped for it alone.
func TestARouterPeerThatDoesNotReadCostsOnlyItself(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var lines logLines
		heard := make(chan string, 2)
		r := listenRouter(t, bindEndpoint(t, scheme), lines.log, func(_ *zmtp.Router, frames [][]byte) {
			heard <- string(frames[0])
		})
		stuck := dialRaw(t, r.Endpoint())
		stuck.write(zmtp.GreetingFor(3, 1, "NULL"), zmtp.Ready("DEALER", "stuck"))
		stuck.readGreeting()
		stuck.readFrame() // READY
		stuck.write(zmtp.Frame(0, []byte("here")))
		reader, in := dialDealer(t, r.Endpoint(), "reader")
		if err := reader.Send(msg("here")); err != nil {
			t.Fatal(err)
		}
		// Each peer is registered once the Router has handled its message.
		if got := map[string]bool{<-heard: true, <-heard: true}; !got["stuck"] || !got["reader"] {
			t.Fatalf("heard from %v", got)
		}

		body := strings.Repeat("x", 1024)
		for i := range stuckMessages {
			m := msg(body, strconv.Itoa(i))
			for _, to := range []string{"stuck", "reader"} {
				if err := r.Send(append([][]byte{[]byte(to)}, m...)); err != nil {
					t.Fatal(err)
				}
			}
			if err := sameFrames(in.next(), m); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		checkDropsLogged(t, &lines)
	})
}

// checkDropsLogged: the stuck peer's drops were logged once in the report
// interval, not once a message; the queue was full at the message count.
func checkDropsLogged(t *testing.T, lines *logLines) {
	t.Helper()
	got := lines.get()
	if len(got) != 1 || !strings.Contains(got[0], "not reading; a message for it dropped, 1000 (") {
		t.Errorf("log lines %q, want one saying the stuck peer's first drop", got)
	}
}

// TestAReadingPeerGetsEverythingAfterABigMessage: a subscriber that reads
// gets a 50 MB message and every small one after it, however long the big
// one takes to leave. A byte limit applied to every peer dropped the idle
// after a 50 MB output, and the client waited for it forever. With Go's
// ordinary system calls and with raw ones (package sysio).
func TestAReadingPeerGetsEverythingAfterABigMessage(t *testing.T) {
	for _, sec := range []struct {
		name string
		opts []zmtp.Option
		raw  bool
	}{{"null", nil, false}, {"curve", []zmtp.Option{zmtp.WithCurve(newCurve(t))}, false},
		{"null, raw system calls", nil, true}, {"curve, raw system calls", []zmtp.Option{zmtp.WithCurve(newCurve(t))}, true}} {
		t.Run(sec.name, func(t *testing.T) {
			sysio.SetRaw(sec.raw)
			t.Cleanup(func() { sysio.SetRaw(false) })
			forSchemes(t, func(t *testing.T, scheme string) {
				p := listenPub(t, bindEndpoint(t, scheme), sec.opts...)
				_, in := dialSub(t, p.Endpoint(), sec.opts...)
				waitSubscribed(t, p, "t", 1)
				// Different bytes in each: a message torn or sent twice
				// by the direct write and the writer shows.
				bigs := [][][]byte{msg("t", strings.Repeat("0123456789", 5<<20)), msg("t", strings.Repeat("abcdefghij", 5<<20))}
				small := []string{"status busy", "stream", "status idle"}
				// The first leaves in part at once and the writer sends
				// the rest; the second waits in the queue meanwhile.
				for _, big := range bigs {
					if err := p.Send(big); err != nil {
						t.Fatal(err)
					}
				}
				for _, s := range small {
					if err := p.Send(msg("t", s)); err != nil {
						t.Fatal(err)
					}
				}
				for _, big := range bigs {
					if err := sameFrames(in.next(), big); err != nil {
						t.Fatalf("a big message: %v", err)
					}
				}
				for _, s := range small {
					if err := sameFrames(in.next(), msg("t", s)); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}
