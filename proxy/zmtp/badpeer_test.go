package zmtp_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/proxy/zmtp"
)

// TestBadPeersAreDropped: a peer that fails the handshake is dropped with
// one log line saying why, and the socket goes on serving good peers.
func TestBadPeersAreDropped(t *testing.T) {
	http := []byte("GET /api/kernels HTTP/1.1\r\nHost: 127.0.0.1:8888\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n")
	cases := []struct {
		name string
		send [][]byte
		says string
	}{
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
	forSchemes(t, func(t *testing.T, scheme string) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var log logLines
				r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t))
				raw := dialRaw(t, r.Endpoint())
				raw.write(tc.send...)
				raw.waitDropped()
				// The line is written before the connection closes.
				if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], tc.says) {
					t.Errorf("log %q, want one line saying %q", lines, tc.says)
				}
				d, in := dialDealer(t, r.Endpoint(), "good")
				roundTrip(t, d, in, "still serving")
				if lines := log.get(); len(lines) != 1 {
					t.Errorf("log after a good peer: %q", lines)
				}
			})
		}
	})
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
