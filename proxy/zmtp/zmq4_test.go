package zmtp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
	"github.com/jupyter-guard/jupyter-guard/proxy/zmtp"
)

// The project's own client speaks zmq4 through proxy/transport's buffered
// endpoints: each socket is checked against it in-process too.

// zmq4Dial connects sock to ep as the client does, and closes it at the
// end of the test.
func zmq4Dial(t *testing.T, sock zmq4.Socket, ep string) {
	t.Helper()
	t.Cleanup(func() { sock.Close() })
	bep, err := transport.Endpoint(ep)
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Dial(bep); err != nil {
		t.Fatalf("zmq4 dial %s: %v", bep, err)
	}
}

// zmq4Recv is sock's next message; the test fails after patience.
func zmq4Recv(t *testing.T, sock zmq4.Socket) [][]byte {
	t.Helper()
	type result struct {
		msg zmq4.Msg
		err error
	}
	got := make(chan result, 1)
	go func() {
		m, err := sock.Recv()
		got <- result{m, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("zmq4 recv: %v", r.err)
		}
		return r.msg.Frames
	case <-time.After(patience):
		t.Fatalf("zmq4: no message within %v", patience)
		return nil
	}
}

func zmq4Send(t *testing.T, sock zmq4.Socket, frames [][]byte) {
	t.Helper()
	if err := sock.Send(zmq4.NewMsgFrom(frames...)); err != nil {
		t.Fatalf("zmq4 send: %v", err)
	}
}

// shapes are messages that stress the framing from the Go side: a Jupyter
// message, empty frames, the 255/256-byte size switch, frames either side
// of inlineMax and of the write buffer, more small frames than the buffer
// holds, and a 20 MB frame.
func shapes() [][][]byte {
	src := rand.NewChaCha8([32]byte{2})
	sized := func(sizes ...int) [][]byte { return randomFrames(src, sizes...) }
	inline := make([]int, 10)
	for i := range inline {
		inline[i] = zmtp.InlineMax
	}
	return [][][]byte{
		msg("<IDS|MSG>", "9c2d6b1f0e7a48a3", `{"msg_type":"execute_request"}`, "{}", "{}", `{"code":"pass"}`),
		msg(""),
		msg("", "", "x", ""),
		sized(254, 255, 256, 257),
		sized(zmtp.InlineMax-1, zmtp.InlineMax, zmtp.InlineMax+1),
		sized(zmtp.BufSize-10, zmtp.BufSize-9, zmtp.BufSize, zmtp.BufSize+1),
		sized(inline...),
		append(append(msg("<IDS|MSG>"), sized(20<<20)...), []byte("tail")),
	}
}

// TestZmq4DealerToOurRouter: the client's zmq4 DEALER against our Router
// echoing through Router.Send: every shape comes back whole, and the
// handler sees the DEALER's identity.
func TestZmq4DealerToOurRouter(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var s senders
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), s.handle(t))
		dealer := zmq4.NewDealer(context.Background(), zmq4.WithID(zmq4.SocketIdentity("go-client")))
		zmq4Dial(t, dealer, r.Endpoint())
		for i, m := range shapes() {
			zmq4Send(t, dealer, m)
			if err := sameFrames(zmq4Recv(t, dealer), m); err != nil {
				t.Fatalf("shape %d: %v", i, err)
			}
		}
		if id := s.of("tail"); id != "go-client" {
			t.Errorf("the Router saw zmq4's identity as %q, want go-client", id)
		}
	})
}

// TestZmq4ReqToOurEcho: a zmq4 REQ pinging Echo gets each ping back.
func TestZmq4ReqToOurEcho(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		e := listenEcho(t, bindEndpoint(t, scheme))
		req := zmq4.NewReq(context.Background())
		zmq4Dial(t, req, e.Endpoint())
		for i := range 100 {
			ping := msg(fmt.Sprint("ping ", i))
			zmq4Send(t, req, ping)
			if err := sameFrames(zmq4Recv(t, req), ping); err != nil {
				t.Fatalf("pong %d: %v", i, err)
			}
		}
	})
}

// TestZmq4SubToOurPub: a zmq4 SUB, which filters nothing itself, gets only
// the topics it subscribed to, and nothing more of one it unsubscribed.
func TestZmq4SubToOurPub(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		p := listenPub(t, bindEndpoint(t, scheme))
		sub := zmq4.NewSub(context.Background())
		zmq4Dial(t, sub, p.Endpoint())
		for _, topic := range []string{"iopub.", "done."} {
			if err := sub.SetOption(zmq4.OptionSubscribe, topic); err != nil {
				t.Fatal(err)
			}
		}
		waitSubscribed(t, p, "done.", 1)
		publish := func(topics ...string) {
			t.Helper()
			for _, topic := range topics {
				if err := p.Send(msg(topic, "body")); err != nil {
					t.Fatal(err)
				}
			}
		}
		publish("other.status", "iopub.status", "iopub", "done.1")
		for _, want := range []string{"iopub.status", "done.1"} {
			if err := sameFrames(zmq4Recv(t, sub), msg(want, "body")); err != nil {
				t.Fatal(err)
			}
		}
		if err := sub.SetOption(zmq4.OptionUnsubscribe, "iopub."); err != nil {
			t.Fatal(err)
		}
		waitSubscribed(t, p, "iopub.status", 0)
		publish("iopub.status", "done.2")
		if err := sameFrames(zmq4Recv(t, sub), msg("done.2", "body")); err != nil {
			t.Fatal(err)
		}
	})
}
