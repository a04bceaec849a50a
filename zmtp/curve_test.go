package zmtp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/nacl/box"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// security is what both ends of a test speak: NULL, or CURVE with a new
// key pair, given as a Jupyter connection file gives it.
type security struct {
	name string
	opts []zmtp.Option // our socket's, bound or dialled
	py   []string      // the pyzmq peer's arguments after its endpoint
}

// forSecurity runs test under NULL and under CURVE, for each scheme.
func forSecurity(t *testing.T, test func(t *testing.T, scheme string, sec security)) {
	pub, sec := newKeyPair(t)
	for _, s := range []security{
		{name: "null"},
		{name: "curve", opts: []zmtp.Option{zmtp.WithCurve(parseCurve(t, pub, sec))}, py: pyCurve(pub, pub, sec)},
	} {
		t.Run(s.name, func(t *testing.T) {
			forSchemes(t, func(t *testing.T, scheme string) { test(t, scheme, s) })
		})
	}
}

// pyCurve are zmqpeer.py's arguments for CURVE: a server with the pair
// public, secret, or a client of server with that pair.
func pyCurve(server, public, secret string) []string {
	return []string{"curve", server, public, secret}
}

// newKeyPair is a new key pair in Z85, as a connection file has it.
func newKeyPair(t *testing.T) (public, secret string) {
	t.Helper()
	pub, sec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return z85(pub[:]), z85(sec[:])
}

// newCurve is a new key pair as a Curve.
func newCurve(t *testing.T) *zmtp.Curve {
	t.Helper()
	pub, sec := newKeyPair(t)
	return parseCurve(t, pub, sec)
}

func parseCurve(t *testing.T, public, secret string) *zmtp.Curve {
	t.Helper()
	c, err := zmtp.ParseCurve(public, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// z85 encodes b (a multiple of 4 bytes long) as rfc.zeromq.org/spec/32
// says: the package only decodes, which keys given in Z85 to libzmq check.
func z85(b []byte) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	var out []byte
	for i := 0; i < len(b); i += 4 {
		v := binary.BigEndian.Uint32(b[i:])
		var five [5]byte
		for j := 4; j >= 0; j-- {
			five[j] = digits[v%85]
			v /= 85
		}
		out = append(out, five[:]...)
	}
	return string(out)
}

// TestParseCurve: the key pair of libzmq's zmq_curve(7) reads as libzmq
// reads it; text that is not a key, or a pair that does not belong
// together, is refused without the error quoting a secret.
func TestParseCurve(t *testing.T) {
	const pub, sec = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID", "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
	c, err := zmtp.ParseCurve(pub, sec)
	if err != nil {
		t.Fatal(err)
	}
	// As pyzmq's zmq.utils.z85.decode has it.
	if got, want := hex.EncodeToString(c.Public[:]), "bb88471d65e2659b30c55a5321cebb5aab2b70a398645c26dca2b2fcb43fc518"; got != want {
		t.Errorf("public key decodes to %s, want %s", got, want)
	}
	if c.Server != c.Public {
		t.Errorf("a connection file's client takes the kernel's public key as the server's")
	}
	if back := z85(c.Secret[:]); back != sec {
		t.Errorf("secret key %q encodes back to %q", sec, back)
	}
	other, _ := newKeyPair(t)
	for _, tc := range []struct{ pub, sec, says string }{
		{pub[:39], sec, "curve_publickey: a Z85 key has 40 characters, not 39"},
		{pub, sec[:20] + "~" + sec[21:], "curve_secretkey: character 21 of the key is not Z85"},
		{pub, "#####" + sec[5:], "curve_secretkey: characters 1-5 of the key are not Z85"}, // 85^5-1 > 2^32-1
		{other, sec, "the CURVE public key is not the secret key's"},
	} {
		_, err := zmtp.ParseCurve(tc.pub, tc.sec)
		if err == nil || err.Error() != tc.says {
			t.Errorf("ParseCurve: %v, want %q", err, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), sec[5:25]) {
			t.Errorf("the error quotes the secret key: %v", err)
		}
	}
}

// TestCurveRoundTrip: our DEALER and SUB as CURVE clients of our ROUTER
// and PUB, message shapes of every size class.
func TestCurveRoundTrip(t *testing.T) {
	keys := newCurve(t)
	forSchemes(t, func(t *testing.T, scheme string) {
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), echo(t), zmtp.WithCurve(keys))
		d, in := dialDealer(t, r.Endpoint(), "curved", zmtp.WithCurve(keys))
		want := msg("", "a", strings.Repeat("b", 255), strings.Repeat("c", 256), strings.Repeat("d", 3*zmtp.BufSize))
		if err := d.Send(want); err != nil {
			t.Fatal(err)
		}
		if err := sameFrames(in.next(), want); err != nil {
			t.Fatal(err)
		}
		p := listenPub(t, bindEndpoint(t, scheme), zmtp.WithCurve(keys))
		_, sub := dialSub(t, p.Endpoint(), zmtp.WithCurve(keys))
		waitSubscribed(t, p, "iopub.status", 1)
		if err := p.Send(want); err != nil {
			t.Fatal(err)
		}
		if err := sameFrames(sub.next(), want); err != nil {
			t.Fatal(err)
		}
	})
}

// dialFails dials a DEALER that must fail at once, not after retrying
// until its context ends, with an error saying says.
func dialFails(t *testing.T, ep, says string, opts ...zmtp.Option) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	start := time.Now()
	p, err := zmtp.DialDealer(ctx, ep, nil, retry, func([][]byte) {}, opts...)
	if err == nil {
		p.Close()
		t.Fatal("the dial succeeded")
	}
	if !strings.Contains(err.Error(), says) {
		t.Errorf("dial: %v; want it to say %q", err, says)
	}
	if d := time.Since(start); d > patience/2 {
		t.Errorf("the dial took %v to fail: it retried a refusal", d)
	}
}

// waitLogged waits for a log line saying says.
func waitLogged(t *testing.T, log *logLines, says string) {
	t.Helper()
	waitFor(t, "a log line saying "+says, func() bool {
		for _, l := range log.get() {
			if strings.Contains(l, says) {
				return true
			}
		}
		return false
	})
}

// TestCurveWrongServerKey: a client given another server's key fails at
// once, saying so, and the server says why it hung up.
func TestCurveWrongServerKey(t *testing.T) {
	forSchemes(t, func(t *testing.T, scheme string) {
		var log logLines
		r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t), zmtp.WithCurve(newCurve(t)))
		dialFails(t, r.Endpoint(), "wrong server key?", zmtp.WithCurve(newCurve(t)))
		waitLogged(t, &log, "peer's HELLO does not open: it was made for another server key")
		dialFails(t, r.Endpoint(), `peer wants security mechanism "CURVE", this socket speaks NULL`)
	})
}

// TestPyzmqCurveRefused: libzmq clients our CURVE ROUTER must refuse: one
// with another kernel's connection file, one whose public key is not its
// secret key's (its vouch does not open), one in clear. Each is never
// answered, and the log says why.
func TestPyzmqCurveRefused(t *testing.T) {
	pub, sec := newKeyPair(t)
	otherPub, otherSec := newKeyPair(t)
	for _, tc := range []struct {
		name string
		py   []string
		says string
	}{
		{"other-server", pyCurve(otherPub, otherPub, otherSec), "peer's HELLO does not open: it was made for another server key"},
		{"bad-pair", pyCurve(pub, otherPub, sec), "peer's vouch in INITIATE does not open"},
		// libzmq hangs up on a greeting with a mechanism not its own.
		{"null", nil, "peer hung up during the greeting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forSchemes(t, func(t *testing.T, scheme string) {
				var log logLines
				r := listenRouter(t, bindEndpoint(t, scheme), log.log, echo(t), zmtp.WithCurve(parseCurve(t, pub, sec)))
				if err := zmqpeer.Start(t, "refused", r.Endpoint(), tc.py...).Finish(); err != nil {
					t.Fatal(err)
				}
				waitLogged(t, &log, tc.says)
			})
		})
	}
}

// TestPyzmqCurveRefusesOurDealer: our DEALER given the wrong server key,
// a public key not its secret key's, or no CURVE, against a libzmq CURVE
// ROUTER fails, saying why.
func TestPyzmqCurveRefusesOurDealer(t *testing.T) {
	pub, sec := newKeyPair(t)
	badPair := *parseCurve(t, pub, sec)
	badPair.Public = newCurve(t).Public
	forSchemes(t, func(t *testing.T, scheme string) {
		peer := zmqpeer.Start(t, "router-echo", zmqpeer.BindEndpoint(t, scheme), pyCurve(pub, pub, sec)...)
		ep := peer.Bound(t)
		dialFails(t, ep, "wrong server key?", zmtp.WithCurve(newCurve(t)))
		// Dial would not take such keys; the handshake is tried by hand.
		const says = "the server hung up on INITIATE: it refused this client's key"
		if _, err := shakeHands(t, ep, &tampered{}, &badPair); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("our DEALER with a bad pair: %v; want it to say %q", err, says)
		}
		// libzmq hangs up on a greeting in clear. If it had begun its own,
		// the dial fails at once; if not, it looks like a kernel going
		// away, and the dial goes on until its context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := zmtp.DialDealer(ctx, ep, nil, retry, func([][]byte) {})
		if err == nil || !strings.Contains(err.Error(), "peer hung up during the greeting") || !strings.Contains(err.Error(), "speak NULL") {
			t.Errorf("our DEALER in clear: %v; want it to say why", err)
		}
	})
}

// tampered is a client's connection with a man in the middle, who may
// change what the client writes (onWrite, on a copy) and what it reads
// (onRead, in place).
type tampered struct {
	net.Conn
	onWrite, onRead func([]byte) []byte
}

func (c *tampered) Write(b []byte) (int, error) {
	out := b
	if c.onWrite != nil {
		out = c.onWrite(bytes.Clone(b))
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *tampered) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.onRead != nil {
		c.onRead(b[:n])
	}
	return n, err
}

// flip changes the byte off bytes into the command named name.
func flip(name string, off int) func([]byte) []byte {
	return func(b []byte) []byte {
		if i := bytes.Index(b, []byte(name)); i >= 0 && i+off < len(b) {
			b[i+off] ^= 1
		}
		return b
	}
}

// shakeHands is a DEALER's handshake with keys through c, to the socket
// at ep; its error is the client's.
func shakeHands(t *testing.T, ep string, c *tampered, keys *zmtp.Curve) (func([][]byte) error, error) {
	t.Helper()
	c.Conn = dialRaw(t, ep).c
	return zmtp.ShakeHands(c, keys)
}

// TestCurveTampering: a man in the middle who changes a byte of the
// handshake or of a message, or sends a message again, is found out: the
// end that finds it says what, and hangs up. So is a client whose public
// key is not its secret key's.
func TestCurveTampering(t *testing.T) {
	keys := newCurve(t)
	badPair := *keys
	badPair.Public = newCurve(t).Public
	// Offsets past a command's name: INITIATE has the cookie (nonce, box),
	// a short nonce and its box; WELCOME a long nonce and its box; READY
	// and MESSAGE a short nonce and a box.
	const initiate, welcome, ready, message = "\x08INITIATE", "\x07WELCOME", "\x05READY", "\x07MESSAGE"
	for _, tc := range []struct {
		name           string
		keys           *zmtp.Curve
		conn           tampered
		client, server string // what each says; "" for nothing
	}{
		{"cookie", keys, tampered{onWrite: flip(initiate, 9+16+5)},
			"the server hung up on INITIATE", "peer's INITIATE does not carry this connection's cookie"},
		{"initiate-nonce", keys, tampered{onWrite: func(b []byte) []byte {
			if i := bytes.Index(b, []byte(initiate)); i >= 0 {
				clear(b[i+9+96 : i+9+96+8])
			}
			return b
		}}, "the server hung up on INITIATE", "peer's INITIATE has nonce 0 after 1"},
		{"initiate-box", keys, tampered{onWrite: flip(initiate, 9+96+8+5)},
			"the server hung up on INITIATE", "peer's INITIATE does not open with the short-term keys"},
		{"welcome", keys, tampered{onRead: flip(welcome, 8+16+5)},
			"server's WELCOME does not open", ""},
		{"ready", keys, tampered{onRead: flip(ready, 6+8+5)},
			"server's READY does not open", ""},
		{"message", keys, tampered{onWrite: flip(message, 8+8+5)},
			"", "peer sent a MESSAGE that does not open with this connection's key"},
		{"replay", keys, tampered{onWrite: func(b []byte) []byte {
			if bytes.Contains(b, []byte(message)) {
				return append(b, b...)
			}
			return b
		}}, "", "peer sent a MESSAGE with nonce 3 after 3: replayed or out of order"},
		{"bad-pair", &badPair, tampered{},
			"the server hung up on INITIATE: it refused this client's key", "peer's vouch in INITIATE does not open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logLines
			in := newInbox(t)
			r := listenRouter(t, bindEndpoint(t, "tcp"), log.log, func(_ *zmtp.Router, frames [][]byte) { in.handle(frames) }, zmtp.WithCurve(keys))
			send, err := shakeHands(t, r.Endpoint(), &tc.conn, tc.keys)
			switch {
			case tc.client != "" && (err == nil || !strings.Contains(err.Error(), tc.client)):
				t.Errorf("client's handshake: %v; want it to say %q", err, tc.client)
			case tc.client == "" && err != nil:
				t.Fatalf("client's handshake: %v", err)
			case err == nil:
				if err := send(msg("tampered with")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.server != "" {
				waitLogged(t, &log, tc.server)
			}
			if tc.name == "replay" {
				if got := in.next(); len(got) != 2 || string(got[1]) != "tampered with" {
					t.Errorf("the first copy of the message arrived as %q", got)
				}
			}
			if len(in.ch) > 0 {
				t.Errorf("the server took %q from a tampered connection", <-in.ch)
			}
		})
	}
}
