package zmtp_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
	"github.com/jupyter-guard/jupyter-guard/proxy/zmtp"
)

// The kernel and Jupyter speak libzmq: each socket is checked against
// pyzmq in the role it meets in the proxy. The frame shapes are the
// script's messages(): empty frames, the 255/256-byte size switch, a
// 20 MB frame.

// TestPyzmqRouterToOurDealer: our DEALER against a libzmq ROUTER, as the
// proxy talks to a kernel's shell. The ROUTER sends every shape and checks
// that each comes back, so both our reading and our writing meet libzmq's.
func TestPyzmqRouterToOurDealer(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		peer := zmqpeer.Start(t, "router-sends", zmqpeer.BindEndpoint(t, scheme))
		ep := peer.Bound(t)
		ready := make(chan struct{})
		var d *zmtp.Peer
		// Its handler echoes; the inbox dialPeer offers stays empty.
		d, _ = dialPeer(t, func(ctx context.Context, _ zmtp.Handler) (*zmtp.Peer, error) {
			return zmtp.DialDealer(ctx, ep, []byte("go-dealer"), retry, func(frames [][]byte) {
				<-ready // d is set
				if err := d.Send(frames); err != nil {
					t.Errorf("echo: %v", err)
				}
			})
		})
		close(ready)
		if err := d.Send(msg("go-dealer")); err != nil { // hello: who we are
			t.Fatal(err)
		}
		if err := peer.Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPyzmqDealerToOurRouter: a libzmq DEALER, as Jupyter's client is,
// against our Router echoing through Router.Send; the DEALER checks every
// shape comes back, and the handler sees the DEALER's identity.
func TestPyzmqDealerToOurRouter(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var s senders
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), s.handle(t))
		peer := zmqpeer.Start(t, "dealer", r.Endpoint())
		if err := peer.Finish(); err != nil {
			t.Fatal(err)
		}
		if id := s.of("tail"); id != "py-dealer" {
			t.Errorf("the Router saw libzmq's identity as %q, want py-dealer", id)
		}
	})
}

// TestPyzmqReqToOurEcho: Jupyter's heartbeat, a libzmq REQ, against Echo.
func TestPyzmqReqToOurEcho(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		e := listenEcho(t, bindEndpoint(t, scheme))
		if err := zmqpeer.Start(t, "req", e.Endpoint()).Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPyzmqSubToOurPub: Jupyter's IOPub subscriber (a libzmq SUB on
// "iopub.") against our Pub gets the matching messages; an XSUB, which
// filters nothing itself, shows that the Pub sent nothing else.
func TestPyzmqSubToOurPub(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		for _, mode := range []string{"sub", "xsub"} {
			t.Run(mode, func(t *testing.T) {
				p := listenPub(t, bindEndpoint(t, scheme))
				peer := zmqpeer.Start(t, mode, p.Endpoint())
				waitSubscribed(t, p, "iopub.status", 1)
				for i := range 5 {
					for _, m := range [][][]byte{
						msg("other.status", "must be filtered"),
						msg("iopub.status", fmt.Sprintf(`{"execution_state":"busy","n":%d}`, i)),
					} {
						if err := p.Send(m); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := peer.Finish(); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestPyzmqXPubToOurSub: our SUB against a libzmq XPUB, as the proxy
// subscribes to ipykernel 7's IOPub: the XPUB waits for the subscription
// (ours is to everything) before it publishes.
func TestPyzmqXPubToOurSub(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		peer := zmqpeer.Start(t, "xpub", zmqpeer.BindEndpoint(t, scheme))
		_, in := dialSub(t, peer.Bound(t))
		for i := range 5 {
			for _, want := range [][][]byte{msg("other.status", "filtered"), msg("status", fmt.Sprint(i))} {
				if err := sameFrames(in.next(), want); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
			}
		}
		if err := peer.Wait(); err != nil {
			t.Fatal(err)
		}
	})
}
