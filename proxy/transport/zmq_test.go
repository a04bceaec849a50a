package transport

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

var bufferedSchemes = []string{SchemeTCP, SchemeIPC}

// edgeMessages are frame layouts that stress the framing: empty frames,
// the 255/256-byte switch to 8-byte sizes, the write buffer's size and
// a 20 MB output.
func edgeMessages() []zmq4.Msg {
	rng := rand.New(rand.NewPCG(3, 4))
	sized := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	return []zmq4.Msg{
		jupyterMsg(),
		zmq4.NewMsgFrom([]byte{}),
		zmq4.NewMsgFrom([]byte{}, []byte{}, []byte("x"), []byte{}),
		zmq4.NewMsgFrom(sized(254), sized(255), sized(256), sized(257)),
		zmq4.NewMsgFrom(sized(bufSize-1), sized(bufSize), sized(bufSize+1)),
		zmq4.NewMsgFrom([]byte("<IDS|MSG>"), sized(20<<20), []byte("tail")),
	}
}

func sameFrames(got, want [][]byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			return fmt.Errorf("frame %d: got %d bytes, want %d (or contents differ)", i, len(got[i]), len(want[i]))
		}
	}
	return nil
}

func TestRouterDealerEdgeMessages(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			router, dealer := routerDealer(t, scheme, "client-1")
			for i, msg := range edgeMessages() {
				if err := dealer.Send(msg); err != nil {
					t.Fatalf("message %d: dealer send: %v", i, err)
				}
				in, err := router.Recv()
				if err != nil {
					t.Fatalf("message %d: router recv: %v", i, err)
				}
				want := append([][]byte{[]byte("client-1")}, msg.Frames...)
				if err := sameFrames(in.Frames, want); err != nil {
					t.Fatalf("message %d at router: %v", i, err)
				}
				if err := router.Send(in); err != nil {
					t.Fatalf("message %d: router send: %v", i, err)
				}
				back, err := dealer.Recv()
				if err != nil {
					t.Fatalf("message %d: dealer recv: %v", i, err)
				}
				if err := sameFrames(back.Frames, msg.Frames); err != nil {
					t.Fatalf("message %d back at dealer: %v", i, err)
				}
			}
		})
	}
}

// TestRouterRoutesByIdentity: three clients share a ROUTER and each gets
// only its own replies.
func TestRouterRoutesByIdentity(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			ctx := context.Background()
			router := zmq4.NewRouter(ctx, zmq4.WithID(zmq4.SocketIdentity("kernel")))
			ids := []string{"a", "b", "c"}
			dealers := make([]zmq4.Socket, len(ids))
			listen, dial := endpoints(t, scheme)
			if err := router.Listen(listen); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { router.Close() })
			for i, id := range ids {
				dealers[i] = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity(id)))
				t.Cleanup(func() { dealers[i].Close() })
				if err := dealers[i].Dial(dial(router)); err != nil {
					t.Fatal(err)
				}
			}
			go echo(router)
			const rounds = 50
			var wg sync.WaitGroup
			errs := make(chan error, len(ids))
			for i, id := range ids {
				wg.Go(func() {
					for n := range rounds {
						body := []byte(id + ":" + strconv.Itoa(n))
						if err := dealers[i].Send(zmq4.NewMsgFrom([]byte{}, body)); err != nil {
							errs <- fmt.Errorf("%s send: %w", id, err)
							return
						}
						back, err := dealers[i].Recv()
						if err != nil {
							errs <- fmt.Errorf("%s recv: %w", id, err)
							return
						}
						if err := sameFrames(back.Frames, [][]byte{{}, body}); err != nil {
							errs <- fmt.Errorf("%s round %d: %w", id, n, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// TestManyInFlightBothWays has several goroutines send on each side at
// once while the other side reads, so partial buffers and concurrent
// writers on one connection are exercised; each stream must arrive whole
// and in order.
func TestManyInFlightBothWays(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			router, dealer := routerDealer(t, scheme, "client")
			if err := dealer.Send(zmq4.NewMsg([]byte("hello"))); err != nil {
				t.Fatal(err)
			}
			hello, err := router.Recv()
			if err != nil {
				t.Fatal(err)
			}
			id := hello.Frames[0]

			const senders, perSender = 4, 500
			payload := func(sender, n int) []byte {
				return bytes.Repeat([]byte{byte(sender)}, (n*37)%3000)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 4*senders)
			for s := range senders {
				wg.Go(func() {
					for n := range perSender {
						tag := []byte(fmt.Sprintf("%d:%d", s, n))
						if err := dealer.Send(zmq4.NewMsgFrom(tag, payload(s, n))); err != nil {
							errs <- fmt.Errorf("dealer send: %w", err)
							return
						}
					}
				})
				wg.Go(func() {
					for n := range perSender {
						tag := []byte(fmt.Sprintf("%d:%d", s, n))
						if err := router.Send(zmq4.NewMsgFrom(id, tag, payload(s, n))); err != nil {
							errs <- fmt.Errorf("router send: %w", err)
							return
						}
					}
				})
			}
			// receive checks every sender's stream arrives in order.
			receive := func(name string, sock zmq4.Socket, skip int) {
				next := make([]int, senders)
				for range senders * perSender {
					msg, err := sock.Recv()
					if err != nil {
						errs <- fmt.Errorf("%s recv: %w", name, err)
						return
					}
					frames := msg.Frames[skip:]
					var s, n int
					if _, err := fmt.Sscanf(string(frames[0]), "%d:%d", &s, &n); err != nil || s >= senders {
						errs <- fmt.Errorf("%s: bad tag %q", name, frames[0])
						return
					}
					if n != next[s] || !bytes.Equal(frames[1], payload(s, n)) {
						errs <- fmt.Errorf("%s: sender %d: got message %d (%d bytes), want %d", name, s, n, len(frames[1]), next[s])
						return
					}
					next[s]++
				}
			}
			wg.Go(func() { receive("router", router, 1) })
			wg.Go(func() { receive("dealer", dealer, 0) })
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// publishUntil publishes msgs in turn until stop is closed; PUB drops
// what it sends before the subscription arrives, so the test just keeps
// going until the subscriber has what it needs. The pause only keeps
// zmq4's unbounded PUB queue small.
func publishUntil(pub zmq4.Socket, stop <-chan struct{}, msgs ...zmq4.Msg) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if err := pub.Send(msgs[i%len(msgs)]); err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPubSub(t *testing.T) {
	ctx := context.Background()
	kinds := map[string]func(context.Context, ...zmq4.Option) zmq4.Socket{
		"PUB":  zmq4.NewPub,
		"XPUB": zmq4.NewXPub,
	}
	for kind, newPub := range kinds {
		for _, scheme := range bufferedSchemes {
			t.Run(kind+"/"+scheme, func(t *testing.T) {
				pub := newPub(ctx)
				sub := zmq4.NewSub(ctx)
				if err := sub.SetOption(zmq4.OptionSubscribe, "iopub."); err != nil {
					t.Fatal(err)
				}
				connect(t, scheme, pub, sub)
				stop := make(chan struct{})
				defer close(stop)
				go publishUntil(pub, stop,
					zmq4.NewMsgFrom([]byte("other.status"), []byte("must be filtered")),
					zmq4.NewMsgFrom([]byte("iopub.status"), []byte(`{"execution_state":"idle"}`)),
				)
				for range 5 {
					msg, err := sub.Recv()
					if err != nil {
						t.Fatalf("sub recv: %v", err)
					}
					if string(msg.Frames[0]) != "iopub.status" {
						t.Fatalf("subscriber got topic %q", msg.Frames[0])
					}
				}
				if topics, ok := pub.(zmq4.Topics); ok {
					if got := topics.Topics(); len(got) != 1 || got[0] != "iopub." {
						t.Errorf("%s sees subscriptions %q, want [iopub.]", kind, got)
					}
				}
			})
		}
	}
}

// TestReqRep is the heartbeat: REQ pings, REP echoes.
func TestReqRep(t *testing.T) {
	for _, scheme := range bufferedSchemes {
		t.Run(scheme, func(t *testing.T) {
			ctx := context.Background()
			rep := zmq4.NewRep(ctx)
			req := zmq4.NewReq(ctx)
			connect(t, scheme, rep, req)
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
			for n := range 100 {
				ping := []byte("ping " + strconv.Itoa(n))
				if err := req.Send(zmq4.NewMsg(ping)); err != nil {
					t.Fatalf("ping %d: %v", n, err)
				}
				pong, err := req.Recv()
				if err != nil {
					t.Fatalf("pong %d: %v", n, err)
				}
				if err := sameFrames(pong.Frames, [][]byte{ping}); err != nil {
					t.Fatalf("pong %d: %v", n, err)
				}
			}
		})
	}
}
