package zmtp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"
)

// CURVE is ZMTP's CurveZMQ mechanism (rfc.zeromq.org/spec/26), as libzmq
// speaks it: Jupyter encrypts a kernel's channels with it when the
// connection file carries curve_publickey and curve_secretkey. The client
// proves it knows the server's public key (HELLO), the two agree on
// short-term keys (WELCOME, INITIATE), the client vouches for its
// long-term key, and every frame after that travels in a MESSAGE box.
// Like a libzmq server without a ZAP handler, the server accepts any
// client key: jupyter_client's heartbeat makes up a new one each time.

// Key is a Curve25519 key, public or secret.
type Key [32]byte

// z85Digits is Z85 (rfc.zeromq.org/spec/32), the text in which libzmq and
// Jupyter's connection files carry keys: 5 characters for 4 bytes.
const z85Digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// parseKey decodes a key written in Z85 (40 characters). Its errors do
// not quote the text: it may be a secret key.
func parseKey(s string) (Key, error) {
	var k Key
	if len(s) != 40 {
		return k, fmt.Errorf("a Z85 key has 40 characters, not %d", len(s))
	}
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			d := strings.IndexByte(z85Digits, s[j])
			if d < 0 {
				return Key{}, fmt.Errorf("character %d of the key is not Z85", j+1)
			}
			v = v*85 + uint64(d)
		}
		if v > 1<<32-1 {
			return Key{}, fmt.Errorf("characters %d-%d of the key are not Z85", i+1, i+5)
		}
		binary.BigEndian.PutUint32(k[i/5*4:], uint32(v))
	}
	return k, nil
}

// Curve is a socket's CurveZMQ keys. A bound socket is the server and
// holds the long-term pair Public and Secret; a dialled socket is a client
// with its own pair, and Server is the public key of the server it dials.
type Curve struct {
	Public, Secret, Server Key
}

// ParseCurve reads the keys of a Jupyter connection file, curve_publickey
// and curve_secretkey, in Z85: the kernel's pair, which jupyter_client's
// sockets also take as their own, with the kernel's public key as the
// server's. So the Curve serves both ends: the proxy's bound sockets
// towards Jupyter and its dialled ones towards a kernel.
func ParseCurve(public, secret string) (*Curve, error) {
	pub, err := parseKey(public)
	if err != nil {
		return nil, fmt.Errorf("curve_publickey: %w", err)
	}
	sec, err := parseKey(secret)
	if err != nil {
		return nil, fmt.Errorf("curve_secretkey: %w", err)
	}
	c := &Curve{Public: pub, Secret: sec, Server: pub}
	return c, c.check()
}

// check makes sure Public is Secret's: keys that do not belong together
// are reported once, where they are given, instead of as a handshake that
// fails with every peer.
func (c *Curve) check() error {
	pub, err := curve25519.X25519(c.Secret[:], curve25519.Basepoint)
	if err != nil || subtle.ConstantTimeCompare(pub, c.Public[:]) != 1 {
		return errors.New("the CURVE public key is not the secret key's")
	}
	return nil
}

// Option is a choice about a socket's connections, for the functions that
// bind or dial it.
type Option func(*options)

type options struct {
	curve  *Curve
	limits *Limits
}

// WithCurve has the socket speak CURVE with keys: as the server if it is
// bound, as a client if it dials. With nil keys it speaks NULL, in clear,
// as without the option, so a caller can pass what a connection file has.
func WithCurve(keys *Curve) Option { return func(o *options) { o.curve = keys } }

func optionsOf(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.curve != nil {
		if err := o.curve.check(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// securityError is a handshake that failed on the mechanism or the keys:
// trying again cannot mend it, so a dial gives up at once.
type securityError struct{ msg string }

func (e *securityError) Error() string { return e.msg }

func refused(format string, args ...any) error {
	return &securityError{fmt.Sprintf(format, args...)}
}

// closedByPeer says the peer ended the connection: not this end, nor a
// deadline.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// Nonces: a 16-byte prefix and a short nonce, a counter that each side
// raises for every box it sends, or an 8-byte prefix and 16 random bytes.
const (
	nonceHello    = "CurveZMQHELLO---"
	nonceInitiate = "CurveZMQINITIATE"
	nonceReady    = "CurveZMQREADY---"
	nonceToServer = "CurveZMQMESSAGEC"
	nonceToClient = "CurveZMQMESSAGES"
	nonceWelcome  = "WELCOME-"
	nonceCookie   = "COOKIE--"
	nonceVouch    = "VOUCH---"
)

// The handshake commands' data (after the name): HELLO is version 1.0,
// 72 bytes of padding (so the server never answers with more than it got:
// no amplifying attacks through it), the client's short-term key C', a
// short nonce and a box of 64 zero bytes. WELCOME is a long nonce and a box of
// the server's short-term key S' and the cookie. INITIATE is the cookie, a
// short nonce and a box of the client's long-term key C, the vouch and its
// metadata. READY is a short nonce and a box of the server's metadata.
const (
	helloLen       = 2 + 72 + 32 + 8 + box.Overhead + 64
	cookieLen      = 16 + secretbox.Overhead + 64
	welcomeLen     = 16 + box.Overhead + 32 + cookieLen
	vouchLen       = 16 + box.Overhead + 64
	initiateMinLen = cookieLen + 8 + box.Overhead + 32 + vouchLen
	readyMinLen    = 8 + box.Overhead
)

// MESSAGE carries one frame: its name, a short nonce, and a box of the
// frame's flags (libzmq's: more, command) and body.
const (
	messageName   = "\x07MESSAGE"
	messageMinLen = len(messageName) + 8 + box.Overhead + 1
	curveMore     = 0x01
	curveCommand  = 0x02
)

func shortNonce(prefix string, n uint64) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	binary.BigEndian.PutUint64(nonce[16:], n)
	return &nonce
}

func longNonce(prefix string, random []byte) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	copy(nonce[8:], random)
	return &nonce
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails
	return b
}

// precompute is box.Precompute refusing a peer key of low order, whose
// shared secret is zero whatever the secret key, so anyone could open and
// make its boxes (libsodium refuses them too).
func precompute(shared *[32]byte, peer *Key, secret *[32]byte) bool {
	if _, err := curve25519.X25519(secret[:], peer[:]); err != nil {
		return false
	}
	box.Precompute(shared, (*[32]byte)(peer), secret)
	return true
}

// curveSession boxes a connection's frames once its handshake is done.
type curveSession struct {
	key                    [32]byte // shared by the two short-term keys
	sendPrefix, recvPrefix string
	// sent is the last short nonce sent, received the last one received:
	// each must be above the one before, so a frame replayed or moved is
	// refused.
	sent, received uint64
}

// seal is a MESSAGE command's body carrying one frame, with libzmq's
// flags (curveMore, curveCommand). Called under the write lock, so nonces
// go out in order.
func (s *curveSession) seal(flags byte, frame []byte) []byte {
	s.sent++
	plain := make([]byte, 1+len(frame))
	plain[0] = flags
	copy(plain[1:], frame)
	out := make([]byte, len(messageName)+8, len(messageName)+8+box.Overhead+len(plain))
	copy(out, messageName)
	binary.BigEndian.PutUint64(out[len(messageName):], s.sent)
	return box.SealAfterPrecomputation(out, plain, shortNonce(s.sendPrefix, s.sent), &s.key)
}

// sealMsg boxes each frame of a message; the MORE flags travel inside.
func (s *curveSession) sealMsg(frames [][]byte) [][]byte {
	sealed := make([][]byte, len(frames))
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = curveMore
		}
		sealed[i] = s.seal(flags, f)
	}
	return sealed
}

// open is the frame a MESSAGE carries, with its flags as ZMTP's.
func (s *curveSession) open(body []byte) (flags byte, frame []byte, err error) {
	if len(body) < messageMinLen || string(body[:len(messageName)]) != messageName {
		return 0, nil, fmt.Errorf("peer sent a frame of %d bytes that is not a CURVE MESSAGE", len(body))
	}
	n := binary.BigEndian.Uint64(body[len(messageName):])
	if n <= s.received {
		return 0, nil, fmt.Errorf("peer sent a MESSAGE with nonce %d after %d: replayed or out of order", n, s.received)
	}
	plain, ok := box.OpenAfterPrecomputation(nil, body[len(messageName)+8:], shortNonce(s.recvPrefix, n), &s.key)
	if !ok {
		return 0, nil, errors.New("peer sent a MESSAGE that does not open with this connection's key")
	}
	s.received = n
	if plain[0]&curveMore != 0 {
		flags |= flagMore
	}
	if plain[0]&curveCommand != 0 {
		flags |= flagCommand
	}
	return flags, plain[1:], nil
}

// curveServer is the server's side of the handshake after the greetings,
// sending props as its metadata; it returns the client's.
func (c *conn) curveServer(keys *Curve, props []byte) (map[string][]byte, error) {
	hello, err := c.expectCommand("HELLO")
	if err != nil {
		return nil, err
	}
	if len(hello) != helloLen {
		return nil, fmt.Errorf("peer's HELLO has %d bytes of data, CURVE's has %d", len(hello), helloLen)
	}
	if hello[0] != 1 || hello[1] != 0 {
		return nil, refused("peer speaks CURVE %d.%d, 1.0 is spoken", hello[0], hello[1])
	}
	var clientShort Key
	copy(clientShort[:], hello[74:106])
	helloNonce := binary.BigEndian.Uint64(hello[106:114])
	var helloKey [32]byte
	if !precompute(&helloKey, &clientShort, (*[32]byte)(&keys.Secret)) {
		return nil, refused("peer's short-term key in HELLO is not a usable key")
	}
	if _, ok := box.OpenAfterPrecomputation(nil, hello[114:], shortNonce(nonceHello, helloNonce), &helloKey); !ok {
		return nil, refused("peer's HELLO does not open: it was made for another server key")
	}

	// The cookie is the state the server would otherwise keep between
	// WELCOME and INITIATE: the client sends it back, and only this
	// connection's cookie key opens it.
	shortPub, shortSec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	cookieKey := (*[32]byte)(randomBytes(32))
	cookieNonce := randomBytes(16)
	cookie := secretbox.Seal(cookieNonce, append(clientShort[:], shortSec[:]...), longNonce(nonceCookie, cookieNonce), cookieKey)
	welcomeNonce := randomBytes(16)
	welcome := box.SealAfterPrecomputation(welcomeNonce, append(shortPub[:], cookie...), longNonce(nonceWelcome, welcomeNonce), &helloKey)
	if err := c.writeCommand("WELCOME", welcome); err != nil {
		return nil, fmt.Errorf("send WELCOME: %w", err)
	}

	initiate, err := c.expectCommand("INITIATE")
	if err != nil {
		return nil, err
	}
	if len(initiate) < initiateMinLen {
		return nil, fmt.Errorf("peer's INITIATE has %d bytes of data, CURVE's has at least %d", len(initiate), initiateMinLen)
	}
	back, ok := secretbox.Open(nil, initiate[16:cookieLen], longNonce(nonceCookie, initiate[:16]), cookieKey)
	if !ok || subtle.ConstantTimeCompare(back, append(clientShort[:], shortSec[:]...)) != 1 {
		return nil, refused("peer's INITIATE does not carry this connection's cookie")
	}
	initiateNonce := binary.BigEndian.Uint64(initiate[cookieLen:])
	if initiateNonce <= helloNonce {
		return nil, refused("peer's INITIATE has nonce %d after %d", initiateNonce, helloNonce)
	}
	var session [32]byte
	// clientShort is of high order: precompute took it with our long-term key.
	box.Precompute(&session, (*[32]byte)(&clientShort), shortSec)
	plain, ok := box.OpenAfterPrecomputation(nil, initiate[cookieLen+8:], shortNonce(nonceInitiate, initiateNonce), &session)
	if !ok {
		return nil, refused("peer's INITIATE does not open with the short-term keys")
	}
	// The vouch: the client's long-term key C boxes C' and the server's
	// long-term key for S', so only the holder of C's secret key made it.
	var clientLong Key
	copy(clientLong[:], plain[:32])
	var vouchKey [32]byte
	if !precompute(&vouchKey, &clientLong, shortSec) {
		return nil, refused("peer's long-term key in INITIATE is not a usable key")
	}
	vouch, ok := box.OpenAfterPrecomputation(nil, plain[48:48+box.Overhead+64], longNonce(nonceVouch, plain[32:48]), &vouchKey)
	if !ok || subtle.ConstantTimeCompare(vouch, append(clientShort[:], keys.Public[:]...)) != 1 {
		return nil, refused("peer's vouch in INITIATE does not open: it does not hold the secret key of the public key it gives")
	}
	peer, err := parseProperties(plain[128:])
	if err != nil {
		return nil, fmt.Errorf("peer's INITIATE: %w", err)
	}

	s := &curveSession{key: session, sendPrefix: nonceToClient, recvPrefix: nonceToServer, sent: 1, received: initiateNonce}
	ready := box.SealAfterPrecomputation(binary.BigEndian.AppendUint64(nil, s.sent), props, shortNonce(nonceReady, s.sent), &session)
	if err := c.writeCommand("READY", ready); err != nil {
		return nil, fmt.Errorf("send READY: %w", err)
	}
	c.curve = s
	return peer, nil
}

// curveClient is the client's side of the handshake after the greetings,
// sending props as its metadata; it returns the server's.
func (c *conn) curveClient(keys *Curve, props []byte) (map[string][]byte, error) {
	shortPub, shortSec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	var helloKey [32]byte
	if !precompute(&helloKey, &keys.Server, shortSec) {
		return nil, refused("the CURVE server key is not a usable key")
	}
	hello := make([]byte, 114, helloLen)
	hello[0] = 1 // version 1.0, then the padding
	copy(hello[74:], shortPub[:])
	binary.BigEndian.PutUint64(hello[106:], 1)
	hello = box.SealAfterPrecomputation(hello, make([]byte, 64), shortNonce(nonceHello, 1), &helloKey)
	if err := c.writeCommand("HELLO", hello); err != nil {
		return nil, fmt.Errorf("send HELLO: %w", err)
	}

	welcome, err := c.answer("WELCOME", "the server hung up on HELLO: it does not hold the secret key of the server key given (wrong server key?)")
	if err != nil {
		return nil, err
	}
	if len(welcome) != welcomeLen {
		return nil, fmt.Errorf("server's WELCOME has %d bytes of data, CURVE's has %d", len(welcome), welcomeLen)
	}
	plain, ok := box.OpenAfterPrecomputation(nil, welcome[16:], longNonce(nonceWelcome, welcome[:16]), &helloKey)
	if !ok {
		return nil, refused("server's WELCOME does not open: it does not hold the secret key of the server key given (wrong server key?)")
	}
	var serverShort Key
	copy(serverShort[:], plain[:32])
	var session, vouchKey [32]byte
	if !precompute(&session, &serverShort, shortSec) || !precompute(&vouchKey, &serverShort, (*[32]byte)(&keys.Secret)) {
		return nil, refused("server's short-term key in WELCOME is not a usable key")
	}
	vouchNonce := randomBytes(16)
	vouch := box.SealAfterPrecomputation(vouchNonce, append(shortPub[:], keys.Server[:]...), longNonce(nonceVouch, vouchNonce), &vouchKey)
	inner := append(append(keys.Public[:], vouch...), props...)
	initiate := binary.BigEndian.AppendUint64(plain[32:32+cookieLen:32+cookieLen], 2)
	initiate = box.SealAfterPrecomputation(initiate, inner, shortNonce(nonceInitiate, 2), &session)
	if err := c.writeCommand("INITIATE", initiate); err != nil {
		return nil, fmt.Errorf("send INITIATE: %w", err)
	}

	ready, err := c.answer("READY", "the server hung up on INITIATE: it refused this client's key")
	if err != nil {
		return nil, err
	}
	if len(ready) < readyMinLen {
		return nil, fmt.Errorf("server's READY has %d bytes of data, CURVE's has at least %d", len(ready), readyMinLen)
	}
	readyNonce := binary.BigEndian.Uint64(ready)
	meta, ok := box.OpenAfterPrecomputation(nil, ready[8:], shortNonce(nonceReady, readyNonce), &session)
	if !ok {
		return nil, refused("server's READY does not open with the short-term keys")
	}
	peer, err := parseProperties(meta)
	if err != nil {
		return nil, fmt.Errorf("server's READY: %w", err)
	}
	c.curve = &curveSession{key: session, sendPrefix: nonceToServer, recvPrefix: nonceToClient, sent: 2, received: readyNonce}
	return peer, nil
}

// answer reads the server's answer, command name, to the client's last
// command. libzmq hangs up on a command it refuses, so a hang-up here is
// a refusal, which hungUp says the meaning of.
func (c *conn) answer(name, hungUp string) ([]byte, error) {
	data, err := c.expectCommand(name)
	if closedByPeer(err) {
		return nil, refused("%s", hungUp)
	}
	return data, err
}
