package zmtp_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// TestPubSubscriptions: subscriptions come as ZMTP 3.0 messages (libzmq
// and zmq4 talking to a 3.0 peer) or as 3.1 SUBSCRIBE and CANCEL
// commands; either way a prefix is counted, as libzmq counts it, and its
// last cancel stops delivery.
func TestPubSubscriptions(t *testing.T) {
	variants := []struct {
		name      string
		minor     byte
		subscribe func(topic string) []byte
		cancel    func(topic string) []byte
	}{
		{"message", 0,
			func(topic string) []byte { return zmtp.Frame(0, append([]byte{1}, topic...)) },
			func(topic string) []byte { return zmtp.Frame(0, append([]byte{0}, topic...)) }},
		{"command", 1,
			func(topic string) []byte { return zmtp.Command("SUBSCRIBE", []byte(topic)) },
			func(topic string) []byte { return zmtp.Command("CANCEL", []byte(topic)) }},
	}
	forSchemes(t, func(t *testing.T, scheme string) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				p := listenPub(t, bindEndpoint(t, scheme))
				sub := dialRaw(t, p.Endpoint())
				sub.handshake("SUB", v.minor)
				expect := func(sent ...string) {
					t.Helper()
					for _, m := range sent {
						if err := p.Send(msg(m, "body")); err != nil {
							t.Fatal(err)
						}
					}
					if err := sameFrames(sub.readMsg(), msg(sent[len(sent)-1], "body")); err != nil {
						t.Fatalf("after publishing %q: %v", sent, err)
					}
				}

				sub.write(v.subscribe("a."), v.subscribe("a."), v.subscribe("b."))
				waitSubscribed(t, p, "b.x", 1)
				expect("a.0") // subscribed
				expect("c.0", "b.0")

				// Commands on one connection are handled in order: once
				// "c." shows, the cancel before it has been handled.
				sub.write(v.cancel("a."), v.subscribe("c."))
				waitSubscribed(t, p, "c.x", 1)
				expect("a.1") // subscribed twice, cancelled once

				sub.write(v.cancel("a."))
				waitSubscribed(t, p, "a.x", 0)
				expect("a.2", "b.2") // "a.2" is not delivered
				sub.write(v.cancel("never subscribed"), v.cancel("b."))
				waitSubscribed(t, p, "b.x", 0)
				expect("b.3", "c.3")
			})
		}
	})
}

// TestPubDropsDisconnectedSubscriber: a subscriber that leaves is dropped,
// and the others go on getting every message.
func TestPubDropsDisconnectedSubscriber(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		p := listenPub(t, bindEndpoint(t, scheme))
		leaver, _ := dialSub(t, p.Endpoint())
		_, in := dialSub(t, p.Endpoint())
		waitSubscribed(t, p, "t", 2)
		leaver.Close()
		// Sent whether or not the Pub has seen the leaver go yet.
		for _, m := range []string{"1", "2", "3"} {
			if err := p.Send(msg("t", m)); err != nil {
				t.Fatal(err)
			}
			if err := sameFrames(in.next(), msg("t", m)); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "the leaver dropped", func() bool {
			conns, _ := p.Subscribers("t")
			return conns == 1
		})
		if err := p.Send(msg("t", "4")); err != nil {
			t.Fatal(err)
		}
		if err := sameFrames(in.next(), msg("t", "4")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPubWelcomesEachNewSubscription: the welcome goes to the subscriber
// that subscribed, once per topic, and WelcomeAll greets those who
// subscribed before there was a welcome to give.
func TestPubWelcomesEachNewSubscription(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var give atomic.Bool
		welcome := func(topic []byte) [][]byte {
			if !give.Load() {
				return nil
			}
			return msg("welcome", string(topic))
		}
		p, err := zmtp.ListenPub(bindEndpoint(t, scheme), welcome, testLog(t))
		p = closedAtEnd(t, p, err)
		_, early := dialSub(t, p.Endpoint()) // subscribes to ""
		waitSubscribed(t, p, "x", 1)
		give.Store(true)
		p.WelcomeAll()
		if err := sameFrames(early.next(), msg("welcome", "")); err != nil {
			t.Fatal(err)
		}

		late := dialRaw(t, p.Endpoint())
		late.handshake("SUB", 0)
		late.write(zmtp.Frame(0, []byte("\x01a.")), zmtp.Frame(0, []byte("\x01a.")))
		if err := sameFrames(late.readMsg(), msg("welcome", "a.")); err != nil {
			t.Fatal(err)
		}
		waitSubscribed(t, p, "a.x", 2)
		if err := p.Send(msg("a.1", "body")); err != nil {
			t.Fatal(err)
		}
		// The second "a." was no new subscription: next comes the message.
		if err := sameFrames(late.readMsg(), msg("a.1", "body")); err != nil {
			t.Fatal(err)
		}
		if err := sameFrames(early.next(), msg("a.1", "body")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPubBoundsASubscribersTopics: a peer needs no key to subscribe; past
// the bound its subscriptions are not kept, and matching costs what the
// topic's length costs, however many it made.
func TestPubBoundsASubscribersTopics(t *testing.T) {
	p := listenPub(t, bindEndpoint(t, "tcp"))
	sub := dialRaw(t, p.Endpoint())
	sub.handshake("SUB", 0)
	var frames [][]byte
	for i := range 5000 {
		frames = append(frames, zmtp.Frame(0, []byte(fmt.Sprintf("\x01t%05d.", i))))
	}
	// Then one cancel makes room for "zz.": once it shows, all the
	// subscriptions before it have been handled.
	frames = append(frames, zmtp.Frame(0, []byte("\x00t00000.")), zmtp.Frame(0, []byte("\x01zz.")))
	sub.write(frames...)
	waitSubscribed(t, p, "zz.x", 1)
	for topic, want := range map[string]int{"t01023.x": 1, "t01024.x": 0, "t04999.x": 0, "t00000.x": 0} {
		if _, n := p.Subscribers(topic); n != want {
			t.Errorf("%d subscribers match %q, want %d", n, topic, want)
		}
	}
}

// TestPubWelcomeComesBeforeWhatIsSentMeanwhile: a subscriber that joins
// while messages are being published gets its welcome first, as an XPUB
// would give it (jupyter_kernel_test's welcome test subscribes while the
// kernel still prints).
func TestPubWelcomeComesBeforeWhatIsSentMeanwhile(t *testing.T) {
	p, err := zmtp.ListenPub(bindEndpoint(t, "ipc"), func(topic []byte) [][]byte { return msg("welcome", string(topic)) }, testLog(t))
	p = closedAtEnd(t, p, err)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				_ = p.Send(msg("stream", "body"))
			}
		}
	}()
	for i := range 200 {
		sub := dialRaw(t, p.Endpoint())
		sub.handshake("SUB", 0)
		sub.write(zmtp.Frame(0, []byte("\x01")))
		if err := sameFrames(sub.readMsg(), msg("welcome", "")); err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}

	}
}
