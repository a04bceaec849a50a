package transport

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
	zmqtransport "github.com/go-zeromq/zmq4/transport"
)

// openPair runs zmq4's handshake over trans: a ROUTER side accepted, a
// DEALER side dialled. It returns the dealer's zmq4.Conn and the raw
// accepted conn so a test can break the connection.
func openPair(t *testing.T, trans zmqtransport.Transport) (*zmq4.Conn, net.Conn) {
	t.Helper()
	ctx := context.Background()
	l, err := trans.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	type opened struct {
		raw net.Conn
		err error
	}
	accepted := make(chan opened, 1)
	go func() {
		raw, err := l.Accept()
		if err == nil {
			_, err = zmq4.Open(raw, null.Security(), zmq4.Router, nil, true, nil)
		}
		accepted <- opened{raw, err}
	}()
	raw, err := trans.Dial(ctx, &net.Dialer{}, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	dealer, err := zmq4.Open(raw, null.Security(), zmq4.Dealer, zmq4.SocketIdentity("d"), false, nil)
	if err != nil {
		t.Fatalf("dealer handshake: %v", err)
	}
	server := <-accepted
	if server.err != nil {
		t.Fatalf("router handshake: %v", server.err)
	}
	return dealer, server.raw
}

// TestWriteErrorReachesZmq4: when the peer goes away, SendMsg fails with
// the socket's *net.OpError and zmq4 marks the Conn closed, exactly as
// over zmq4's own tcp transport.
func TestWriteErrorReachesZmq4(t *testing.T) {
	kinds := map[string]zmqtransport.Transport{
		"tcp":     zmqtransport.New("tcp"),
		SchemeTCP: newBufferedTransport("tcp"),
	}
	for name, trans := range kinds {
		t.Run(name, func(t *testing.T) {
			dealer, peer := openPair(t, trans)
			peer.Close()
			// The first writes may still land in the kernel's buffer; the
			// peer's RST fails a later one.
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				err = dealer.SendMsg(jupyterMsg())
			}
			var opErr *net.OpError
			if !errors.As(err, &opErr) {
				t.Fatalf("SendMsg error = %v (%T), want a *net.OpError", err, err)
			}
			if !dealer.Closed() {
				t.Error("zmq4 did not mark the connection closed")
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	cases := []struct{ in, want string }{
		{"tcp://127.0.0.1:5555", "tcpb://127.0.0.1:5555"},
		{"tcp://*:0", "tcpb://*:0"},
		{"ipc:///run/user/1000/kernel-1-shell", "ipcb:///run/user/1000/kernel-1-shell"},
		{"tcpb://127.0.0.1:5555", "tcpb://127.0.0.1:5555"},
	}
	for _, c := range cases {
		got, err := Endpoint(c.in)
		if err != nil || got != c.want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"udp://127.0.0.1:1", "inproc://x", "127.0.0.1:5555"} {
		if got, err := Endpoint(bad); err == nil {
			t.Errorf("Endpoint(%q) = %q, want an error", bad, got)
		}
	}
}

func TestRegisterIsIdempotent(t *testing.T) {
	for range 3 {
		if err := Register(); err != nil {
			t.Fatal(err)
		}
	}
	names := zmq4.Transports()
	for _, s := range []string{SchemeTCP, SchemeIPC} {
		if !slices.Contains(names, s) {
			t.Errorf("zmq4 transports %q lack %q", names, s)
		}
	}
}
