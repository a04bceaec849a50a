package transport

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
)

// The kernel and Jupyter speak libzmq, so the buffered transports are
// checked against pyzmq (internal/zmqpeer) in both roles.

// pyBind is where the pyzmq peer binds for the buffered scheme.
func pyBind(t *testing.T, scheme string) string {
	for plain, s := range schemes {
		if s.buffered == scheme {
			return zmqpeer.BindEndpoint(t, plain)
		}
	}
	t.Fatalf("%q is not a buffered scheme", scheme)
	return ""
}

// pyListen has a Go socket listen on scheme and returns the plain
// endpoint libzmq dials it at.
func pyListen(t *testing.T, scheme string, sock zmq4.Socket) string {
	t.Helper()
	listen, dial := endpoints(t, scheme)
	if err := sock.Listen(listen); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	ep := dial(sock)
	return strings.Replace(ep, "b://", "://", 1)
}

// pyDial has a Go socket dial the pyzmq peer's bound endpoint over the
// buffered transport, and returns that endpoint.
func pyDial(t *testing.T, sock zmq4.Socket, peer *zmqpeer.Peer) string {
	t.Helper()
	t.Cleanup(func() { sock.Close() })
	ep, err := Endpoint(peer.Bound(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Dial(ep); err != nil {
		t.Fatalf("dial pyzmq at %s: %v", ep, err)
	}
	return ep
}

// TestPyzmqRouter: Go DEALER and REQ against a libzmq ROUTER, the
// proxy's view of a kernel's shell and heartbeat.
func TestPyzmqRouter(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			ctx := context.Background()
			peer := zmqpeer.Start(t, "router-echo", pyBind(t, scheme))
			dealer := zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("go-dealer")))
			ep := pyDial(t, dealer, peer)

			if err := dealer.Send(zmq4.NewMsg([]byte("whoami"))); err != nil {
				t.Fatal(err)
			}
			who, err := dealer.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if err := sameFrames(who.Frames, [][]byte{[]byte("go-dealer")}); err != nil {
				t.Errorf("libzmq routes zmq4's identity wrongly: %v (%q)", err, who.Frames)
			}
			for i, msg := range edgeMessages() {
				if err := dealer.Send(msg); err != nil {
					t.Fatalf("message %d: send: %v", i, err)
				}
				back, err := dealer.Recv()
				if err != nil {
					t.Fatalf("message %d: recv: %v", i, err)
				}
				if err := sameFrames(back.Frames, msg.Frames); err != nil {
					t.Fatalf("message %d echoed by libzmq: %v", i, err)
				}
			}

			req := zmq4.NewReq(ctx)
			t.Cleanup(func() { req.Close() })
			if err := req.Dial(ep); err != nil {
				t.Fatal(err)
			}
			for n := range 100 {
				ping := zmq4.NewMsg(fmt.Appendf(nil, "ping %d", n))
				if err := req.Send(ping); err != nil {
					t.Fatalf("ping %d: %v", n, err)
				}
				pong, err := req.Recv()
				if err != nil {
					t.Fatalf("pong %d: %v", n, err)
				}
				if err := sameFrames(pong.Frames, ping.Frames); err != nil {
					t.Fatalf("pong %d: %v", n, err)
				}
			}

			if err := dealer.Send(zmq4.NewMsg([]byte("quit"))); err != nil {
				t.Fatal(err)
			}
			if err := peer.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPyzmqDealer: a libzmq DEALER, as Jupyter's client is, against a Go
// ROUTER listening on the buffered transport.
func TestPyzmqDealer(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			router := zmq4.NewRouter(context.Background(), zmq4.WithID(zmq4.SocketIdentity("kernel")))
			peer := zmqpeer.Start(t, "dealer", pyListen(t, scheme, router))
			ids := make(chan string, 16)
			go func() {
				defer close(ids)
				for {
					msg, err := router.Recv()
					if err != nil {
						return
					}
					ids <- string(msg.Frames[0])
					if err := router.Send(msg); err != nil {
						return
					}
				}
			}()
			if err := peer.Finish(); err != nil {
				t.Fatalf("pyzmq dealer: %v", err)
			}
			if id := <-ids; id != "py-dealer" {
				t.Errorf("zmq4 ROUTER saw libzmq's identity as %q, want py-dealer", id)
			}
		})
	}
}

// TestPyzmqReq: Jupyter's heartbeat REQ against a Go REP.
func TestPyzmqReq(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			rep := zmq4.NewRep(context.Background())
			peer := zmqpeer.Start(t, "req", pyListen(t, scheme, rep))
			go func() {
				for {
					msg, err := rep.Recv()
					if err != nil {
						return
					}
					if err := rep.Send(msg); err != nil {
						return
					}
				}
			}()
			if err := peer.Finish(); err != nil {
				t.Fatalf("pyzmq req: %v", err)
			}
		})
	}
}

// TestPyzmqSub: Jupyter's IOPub SUB against a Go PUB; libzmq's
// subscription must reach zmq4 for anything to arrive.
func TestPyzmqSub(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			pub := zmq4.NewPub(context.Background())
			peer := zmqpeer.Start(t, "sub", pyListen(t, scheme, pub))
			stop := make(chan struct{})
			defer close(stop)
			go publishUntil(pub, stop,
				zmq4.NewMsgFrom([]byte("other.status"), []byte("must be filtered")),
				zmq4.NewMsgFrom([]byte("iopub.status"), []byte(`{"execution_state":"busy"}`)),
			)
			if err := peer.Finish(); err != nil {
				t.Fatalf("pyzmq sub: %v", err)
			}
		})
	}
}

// TestPyzmqXPub: a Go SUB against a libzmq XPUB, as the proxy subscribes
// to ipykernel's IOPub.
func TestPyzmqXPub(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			sub := zmq4.NewSub(context.Background())
			if err := sub.SetOption(zmq4.OptionSubscribe, "iopub."); err != nil {
				t.Fatal(err)
			}
			peer := zmqpeer.Start(t, "xpub", pyBind(t, scheme))
			pyDial(t, sub, peer)
			for i := range 5 {
				msg, err := sub.Recv()
				if err != nil {
					t.Fatalf("sub recv: %v", err)
				}
				want := [][]byte{[]byte("iopub.status"), fmt.Appendf(nil, "%d", i)}
				if err := sameFrames(msg.Frames, want); err != nil {
					t.Fatalf("message %d: %v (%q)", i, err, msg.Frames)
				}
			}
			if err := peer.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
