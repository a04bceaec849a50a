package zmtp_test

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// senders is a Router handler that echoes like echo and records, for
// each message body, the identity the Router gave its sender.
type senders struct {
	mu   sync.Mutex
	from map[string]string // body → identity frame
}

func (s *senders) handle(t *testing.T) func(r *zmtp.Router, frames [][]byte) {
	s.from = map[string]string{}
	next := echo(t)
	return func(r *zmtp.Router, frames [][]byte) {
		s.mu.Lock()
		s.from[string(frames[len(frames)-1])] = string(frames[0])
		s.mu.Unlock()
		next(r, frames)
	}
}

func (s *senders) of(body string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.from[body]
}

// TestRouterRoutesByIdentity: two peers talking at once are told apart by
// the identity they gave, and each gets only its own replies, in order.
func TestRouterRoutesByIdentity(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var s senders
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), s.handle(t))
		const n = 200
		ids := []string{"alice", "bob"}
		inboxes := make([]*inbox, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			var d *zmtp.Peer
			d, inboxes[i] = dialDealer(t, r.Endpoint(), id)
			wg.Go(func() {
				for j := range n {
					if err := d.Send(msg(fmt.Sprint(id, j))); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for i, id := range ids {
			for j := range n {
				want := fmt.Sprint(id, j)
				if err := sameFrames(inboxes[i].next(), msg(want)); err != nil {
					t.Fatalf("%s's reply %d: %v", id, j, err)
				}
				if got := s.of(want); got != id {
					t.Fatalf("%q came from %q, want %q", want, got, id)
				}
			}
		}
		wg.Wait()
	})
}

// TestRouterGeneratesIdentities: peers that give no identity get distinct
// ones, as libzmq makes them (a zero byte, then four), and their replies
// find them.
func TestRouterGeneratesIdentities(t *testing.T) {
	var s senders
	r := listenRouter(t, bindEndpoint(t, "ipc"), testLog(t), s.handle(t))
	ids := map[string]bool{}
	// The last peer names itself like a generated id: libzmq keeps those
	// for itself, so it gets a new one instead of the first peer's.
	for i, given := range []string{"", "", "\x00\x00\x00\x00\x01"} {
		d, in := dialDealer(t, r.Endpoint(), given)
		body := fmt.Sprint("anonymous ", i)
		roundTrip(t, d, in, body)
		id := s.of(body)
		if len(id) != 5 || id[0] != 0 || ids[id] {
			t.Fatalf("peer %d got identity %q; others had %q", i, id, slices.Collect(maps.Keys(ids)))
		}
		ids[id] = true
	}
}

// TestRouterIgnoresDuplicateIdentity: a second connection under an
// identity in use is heard no further, as with libzmq's ROUTER: what it
// sends reaches no handler, the replies keep going to the first, and the
// log says so once.
func TestRouterIgnoresDuplicateIdentity(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var log logLines
		r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t))
		first, in1 := dialDealer(t, r.Endpoint(), "client")
		roundTrip(t, first, in1, "first")
		second, _ := dialDealer(t, r.Endpoint(), "client")
		waitFor(t, "the duplicate logged", func() bool { return len(log.get()) > 0 })
		if err := second.Send(msg("from the newcomer")); err != nil {
			t.Fatal(err)
		}
		second.Close()
		// Once the Router has read the newcomer to its end, an echo of its
		// message would be on the first connection ahead of this reply.
		waitFor(t, "the newcomer gone", func() bool { return r.Conns() == 1 })
		roundTrip(t, first, in1, "still the first's")
		if err := r.Send(msg("client", "routed")); err != nil {
			t.Fatal(err)
		}
		if err := sameFrames(in1.next(), msg("routed")); err != nil {
			t.Fatal(err)
		}
		if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], `identity "client"`) {
			t.Errorf("log %q, want one line about the duplicate", lines)
		}
	})
}

// TestRouterSendToUnknownPeer: a message for an identity nobody has is
// dropped without error, as libzmq's ROUTER does, and reaches no one else.
func TestRouterSendToUnknownPeer(t *testing.T) {
	r := listenRouter(t, bindEndpoint(t, "tcp"), testLog(t), echo(t))
	d, in := dialDealer(t, r.Endpoint(), "known")
	roundTrip(t, d, in, "registered")
	for _, m := range [][][]byte{msg("nobody", "lost"), msg("know", "lost"), msg("known"), nil} {
		if err := r.Send(m); err != nil {
			t.Errorf("Send(%q) = %v", m, err)
		}
	}
	// Replies keep their order: anything misrouted would come first.
	roundTrip(t, d, in, "after")
}

// TestListenOnEveryInterface: "*" as the host binds every interface, as
// libzmq reads it, and a peer on loopback gets through.
func TestListenOnEveryInterface(t *testing.T) {
	r := listenRouter(t, "tcp://*:0", testLog(t), echo(t))
	_, port, err := net.SplitHostPort(strings.TrimPrefix(r.Endpoint(), "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	d, in := dialDealer(t, "tcp://127.0.0.1:"+port, "anywhere")
	roundTrip(t, d, in, "hello")
}
