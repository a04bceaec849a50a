package zmtp_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// The kernel and Jupyter speak libzmq: each socket is checked against
// pyzmq in the role it meets in the proxy, in clear (NULL) and encrypted
// (CURVE, keys given as a Jupyter connection file gives them). The frame
// shapes are the script's messages(): empty frames, the 255/256-byte size
// switch, a 20 MB frame.

// TestPyzmqRouterToOurDealer: our DEALER against a libzmq ROUTER, as the
// proxy talks to a kernel's shell. The ROUTER sends every shape and checks
// that each comes back, so both our reading and our writing meet libzmq's.
func TestPyzmqRouterToOurDealer(t *testing.T) {
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		peer := zmqpeer.Start(t, "router-sends", zmqpeer.BindEndpoint(t, scheme), sec.py...)
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
			}, sec.opts...)
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
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		var s senders
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), s.handle(t), sec.opts...)
		peer := zmqpeer.Start(t, "dealer", r.Endpoint(), sec.py...)
		if err := peer.Finish(); err != nil {
			t.Fatal(err)
		}
		if id := s.of("tail"); id != "py-dealer" {
			t.Errorf("the Router saw libzmq's identity as %q, want py-dealer", id)
		}
	})
}

// TestPyzmqHeartbeatsToOurRouter: a libzmq DEALER with ZMTP heartbeats
// gets our PONGs in time, as commands: under CURVE inside MESSAGE boxes.
func TestPyzmqHeartbeatsToOurRouter(t *testing.T) {
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), echo(t), sec.opts...)
		if err := zmqpeer.Start(t, "heartbeats", r.Endpoint(), sec.py...).Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPyzmqReqToOurEcho: Jupyter's heartbeat, a libzmq REQ, against Echo;
// under CURVE with a client key pair of its own, as jupyter_client's.
func TestPyzmqReqToOurEcho(t *testing.T) {
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		e := listenEcho(t, bindEndpoint(t, scheme), sec.opts...)
		if err := zmqpeer.Start(t, "req", e.Endpoint(), sec.py...).Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPyzmqSubToOurPub: Jupyter's IOPub subscriber (a libzmq SUB on
// "iopub.") against our Pub gets the matching messages; an XSUB, which
// filters nothing itself, shows that the Pub sent nothing else.
func TestPyzmqSubToOurPub(t *testing.T) {
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		for _, mode := range []string{"sub", "xsub"} {
			t.Run(mode, func(t *testing.T) {
				p := listenPub(t, bindEndpoint(t, scheme), sec.opts...)
				peer := zmqpeer.Start(t, mode, p.Endpoint(), sec.py...)
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
	forSecurity(t, func(t *testing.T, scheme string, sec security) {
		peer := zmqpeer.Start(t, "xpub", zmqpeer.BindEndpoint(t, scheme), sec.py...)
		_, in := dialSub(t, peer.Bound(t), sec.opts...)
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
