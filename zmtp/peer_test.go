package zmtp_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// TestDialRetries: the proxy dials a kernel that may not listen yet, or
// not speak yet. DialDealer keeps trying through a refused connection and
// one dropped mid-handshake, and gets through once the Router is there.
func TestDialRetries(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		// A listener that drops its first connection unanswered takes the
		// address until the dialler has been turned away once.
		network, addr := "tcp", "127.0.0.1:0"
		if scheme == "ipc" {
			network, addr = "unix", strings.TrimPrefix(bindEndpoint(t, scheme), "ipc://")
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ep := scheme + "://" + ln.Addr().String()

		in := newInbox(t)
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		var d *zmtp.Peer
		dialled := make(chan error, 1)
		go func() {
			var err error
			d, err = zmtp.DialDealer(ctx, ep, []byte("patient"), retry, in.handle)
			dialled <- err
		}()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		ln.Close() // from here until the Router listens, dials are refused
		listenRouter(t, ep, testLog(t), echo(t))
		if err := <-dialled; err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		roundTrip(t, d, in, "at last")
	})
}

// TestDialGivesUp: with nobody listening, DialDealer returns when its
// context ends, with the context's error.
func TestDialGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ep := bindEndpoint(t, "ipc") // a path nobody listens on
	_, err := zmtp.DialDealer(ctx, ep, nil, retry, func([][]byte) {})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DialDealer with nobody there: %v, want the deadline", err)
	}
}
