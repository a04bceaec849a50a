package zmtp_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// TestBadPeersAreDropped: a peer that fails the handshake is dropped with
// one log line saying why, and the socket goes on serving good peers.
func TestBadPeersAreDropped(t *testing.T) {
	http := []byte("GET /api/kernels HTTP/1.1\r\nHost: 127.0.0.1:8888\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n")
	cases := []badPeer{
		{"garbage", [][]byte{http}, "does not speak ZMTP"},
		{"zmtp2", [][]byte{zmtp.GreetingFor(2, 0, "NULL")}, "speaks ZMTP 2,"},
		// Signature and version only, then silence: told off at once,
		// not after the handshake timeout (beyond the test's patience).
		{"zmtp2-short", [][]byte{zmtp.GreetingFor(2, 0, "NULL")[:11]}, "speaks ZMTP 2,"},
		{"plain", [][]byte{zmtp.GreetingFor(3, 0, "PLAIN")}, `"PLAIN"`},
		{"sub", [][]byte{zmtp.GreetingFor(3, 0, "NULL"), zmtp.Ready("SUB", "")}, `cannot talk to a "SUB"`},
		{"no-ready", [][]byte{zmtp.GreetingFor(3, 0, "NULL"), zmtp.Frame(0, []byte("hi"))}, "where a command belongs"},
		{"identity-256", [][]byte{zmtp.GreetingFor(3, 0, "NULL"), zmtp.Ready("DEALER", strings.Repeat("x", 256))},
			"identity has 256 bytes, above libzmq's limit of 255"},
		// A READY announced at 20 MiB is refused at its size, before its
		// bytes (which never come) are waited for.
		{"huge-ready", [][]byte{zmtp.GreetingFor(3, 0, "NULL"),
			binary.BigEndian.AppendUint64([]byte{zmtp.FlagCmd | zmtp.FlagLong}, 20<<20)}, "command of 20971520 bytes"},
	}
	dropsBadPeers(t, cases)
}

type badPeer struct {
	name string
	send [][]byte
	says string
}

// dropsBadPeers has each bad peer connect to a Router with opts, and
// checks that it is dropped with one log line saying why, and that a good
// peer with the same opts is served after it.
func dropsBadPeers(t *testing.T, cases []badPeer, opts ...zmtp.Option) {
	forSchemes(t, func(t *testing.T, scheme string) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var log logLines
				r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t), opts...)
				raw := dialRaw(t, r.Endpoint())
				raw.write(tc.send...)
				raw.waitDropped()
				// The line is written before the connection closes.
				if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], tc.says) {
					t.Errorf("log %q, want one line saying %q", lines, tc.says)
				}
				d, in := dialDealer(t, r.Endpoint(), "good", opts...)
				roundTrip(t, d, in, "still serving")
				if lines := log.get(); len(lines) != 1 {
					t.Errorf("log after a good peer: %q", lines)
				}
			})
		}
	})
}

// TestBadCurvePeersAreDropped: what a CURVE server gets before it knows
// anything of its peer: a HELLO that is not CURVE's, or does not open, or
// never comes, drops the peer with a line saying why; a HELLO announced at
// 20 MiB is refused at its size.
func TestBadCurvePeersAreDropped(t *testing.T) {
	greeting := zmtp.GreetingFor(3, 0, "CURVE")
	// HELLO's data: version, padding, the client's short-term key, a
	// short nonce, the signature box.
	hello := func(version byte, key, sig []byte) []byte {
		data := append([]byte{version, 0}, make([]byte, 72)...)
		data = append(data, key...)
		data = binary.BigEndian.AppendUint64(data, 1)
		return zmtp.Command("HELLO", append(data, sig...))
	}
	key, sig := bytes.Repeat([]byte{9}, 32), bytes.Repeat([]byte{7}, 80)
	dropsBadPeers(t, []badPeer{
		{"null", [][]byte{zmtp.GreetingFor(3, 0, "NULL")}, `peer wants security mechanism "NULL", this socket speaks CURVE`},
		{"ready", [][]byte{greeting, zmtp.Ready("DEALER", "")}, `peer sent "READY" where HELLO belongs`},
		{"error", [][]byte{greeting, zmtp.Command("ERROR", []byte("\x04nope"))}, `peer refused the connection: "nope"`},
		{"short", [][]byte{greeting, zmtp.Command("HELLO", make([]byte, 100))}, "peer's HELLO has 100 bytes of data, CURVE's has 194"},
		{"version", [][]byte{greeting, hello(2, key, sig)}, "peer speaks CURVE 2.0, 1.0 is spoken"},
		{"zero-key", [][]byte{greeting, hello(1, make([]byte, 32), sig)}, "peer's short-term key in HELLO is not a usable key"},
		{"forged", [][]byte{greeting, hello(1, key, sig)}, "peer's HELLO does not open: it was made for another server key"},
		{"huge", [][]byte{greeting, binary.BigEndian.AppendUint64([]byte{zmtp.FlagCmd | zmtp.FlagLong}, 20<<20)}, "command of 20971520 bytes"},
	}, zmtp.WithCurve(newCurve(t)))
}

// TestOversizedFrameDropsPeer: a frame announced above maxFrame, after a
// good handshake, ends that peer's connection and nobody else's.
func TestOversizedFrameDropsPeer(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), echo(t))
		d, in := dialDealer(t, r.Endpoint(), "bystander")
		raw := dialRaw(t, r.Endpoint())
		raw.handshake("DEALER", 0)
		// First a good message, so a drop below is not a failed handshake.
		raw.write(zmtp.Frame(0, []byte("hi")))
		if got := raw.readMsg(); len(got) != 1 || string(got[0]) != "hi" {
			t.Fatalf("raw peer got %q back", got)
		}
		raw.write(binary.BigEndian.AppendUint64([]byte{zmtp.FlagLong}, zmtp.MaxFrame+1))
		raw.waitDropped()
		roundTrip(t, d, in, "still serving")
	})
}

// TestSilentPeerBlocksNobody: a peer that connects and never greets holds
// its own connection only; others connect and talk meanwhile. (The
// handshake timeout, 10 s, is above patience: a socket that waited for the
// silent peer first would fail this.)
func TestSilentPeerBlocksNobody(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), echo(t))
		silent := dialRaw(t, r.Endpoint())
		silent.readGreeting() // the socket took the silent peer first

		d, in := dialDealer(t, r.Endpoint(), "talker")
		roundTrip(t, d, in, "not blocked")
	})
}

// TestManyFramesDropPeer: a message of more frames than any Jupyter
// message has (40 MiB of empty frames with MORE set once cost 1.6 GiB)
// ends that peer's connection and nobody else's; an identity of 255
// bytes, libzmq's limit, is still a peer's to have.
func TestManyFramesDropPeer(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var log logLines
		r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t))
		d, in := dialDealer(t, r.Endpoint(), strings.Repeat("b", 255))
		raw := dialRaw(t, r.Endpoint())
		raw.handshake("DEALER", 0)
		empty := zmtp.Frame(zmtp.FlagMore, nil)
		raw.write([]byte(strings.Repeat(string(empty), 2000)))
		raw.waitDropped()
		roundTrip(t, d, in, "still serving")
		if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], "more than 1024 frames") {
			t.Errorf("log %q, want one line saying why the peer was dropped", lines)
		}
	})
}

// TestDialledHandshakeIsBounded: a server that announces its READY, or
// under CURVE its WELCOME, at 20 MiB is refused at its size, as a client
// is: a dialled peer is trusted with memory only once it has shaken hands.
// Trusted sooner, the dial would wait for the 20 MiB and never try again.
func TestDialledHandshakeIsBounded(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		opts      []zmtp.Option
	}{{"NULL", nil}, {"CURVE", []zmtp.Option{zmtp.WithCurve(newCurve(t))}}} {
		t.Run(tc.mechanism, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan struct{}, 100)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					defer c.Close() // open until the test ends: no EOF
					huge := binary.BigEndian.AppendUint64([]byte{zmtp.FlagCmd | zmtp.FlagLong}, 20<<20)
					c.Write(append(zmtp.GreetingFor(3, 0, tc.mechanism), huge...))
					accepted <- struct{}{}
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dialled := make(chan error, 1)
			go func() {
				_, err := zmtp.DialDealer(ctx, "tcp://"+ln.Addr().String(), nil, retry, func([][]byte) {}, tc.opts...)
				dialled <- err
			}()
			for range 2 { // the first try has failed
				select {
				case <-accepted:
				case <-time.After(patience):
					t.Fatalf("the dial did not try again within %v", patience)
				}
			}
			cancel()
			if err := <-dialled; err == nil || !strings.Contains(err.Error(), "command of 20971520 bytes") {
				t.Errorf("dial: %v; want the command refused at its size", err)
			}
		})
	}
}
