package zmtp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// The greeting both ends send first: signature, version, mechanism,
// as-server, filler (64 bytes). The proxy announces 3.0, so a libzmq peer
// speaks 3.0 too and sends subscriptions as messages; a 3.1 peer's
// commands are understood anyway. A CURVE server says so in as-server, as
// the spec asks, but does not count on its peer doing so: libzmq never
// does.
const greetingLen = 64

func greeting(mechanism string, asServer bool) []byte {
	g := make([]byte, greetingLen)
	g[0], g[9] = 0xff, 0x7f
	g[10], g[11] = 3, 0
	copy(g[12:32], mechanism)
	if asServer {
		g[32] = 1
	}
	return g
}

// Socket types, as READY names them.
const (
	typeRouter = "ROUTER"
	typeDealer = "DEALER"
	typePub    = "PUB"
	typeSub    = "SUB"
)

// peersOf are the socket types each socket type may talk to (ZMTP spec 23).
var peersOf = map[string][]string{
	typeRouter: {"DEALER", "REQ", "ROUTER"},
	typeDealer: {"ROUTER", "REP", "DEALER"},
	typePub:    {"SUB", "XSUB"},
	typeSub:    {"PUB", "XPUB"},
}

// handshake exchanges greetings and metadata on c as a socket of type
// sockType with the given identity, and returns the peer's identity. With
// keys it speaks CURVE, as the server if server is set, and boxes every
// frame after; without, NULL.
func (c *conn) handshake(sockType string, identity []byte, keys *Curve, server bool) ([]byte, error) {
	mechanism := "NULL"
	if keys != nil {
		mechanism = "CURVE"
	}
	if _, err := c.Conn.Write(greeting(mechanism, keys != nil && server)); err != nil {
		return nil, fmt.Errorf("send greeting: %w", err)
	}
	readGreeting := func(b []byte, began bool) error {
		n, err := io.ReadFull(c.r, b)
		switch {
		case closedByPeer(err) && (began || n > 0):
			// What libzmq does with a greeting whose mechanism is not its
			// own, if it has begun its own; and what a peer that gave up
			// waiting does, if it was accepted late (the socket was full,
			// or the proxy out of descriptors).
			return refused("peer hung up during the greeting: it does not speak %s, or gave up waiting for this end", mechanism)
		case closedByPeer(err):
			// Or libzmq has not begun; but so does a kernel going away,
			// or a dialler that only probes (RemoveStaleSocket's).
			return fmt.Errorf("peer hung up during the greeting: does it not speak %s?", mechanism)
		case err != nil:
			return fmt.Errorf("read greeting: %w", err)
		}
		return nil
	}
	// The signature and the major version first: a peer that is not ZMTP
	// 3 may never send 64 bytes, and is told off without waiting for them.
	var g [greetingLen]byte
	if err := readGreeting(g[:11], false); err != nil {
		return nil, err
	}
	if g[0] != 0xff || g[9] != 0x7f {
		return nil, fmt.Errorf("peer does not speak ZMTP")
	}
	if g[10] < 3 {
		return nil, fmt.Errorf("peer speaks ZMTP %d, 3.0 or later is needed", g[10])
	}
	if err := readGreeting(g[11:], true); err != nil {
		return nil, err
	}
	if mech := string(bytes.TrimRight(g[12:32], "\x00")); mech != mechanism {
		return nil, refused("peer wants security mechanism %q, this socket speaks %s", mech, mechanism)
	}

	props := map[string][]byte{"Socket-Type": []byte(sockType)}
	if sockType == typeRouter || sockType == typeDealer {
		props["Identity"] = identity
	}
	meta := encodeProperties(props)
	var peer map[string][]byte
	var err error
	switch {
	case keys == nil:
		peer, err = c.nullReady(meta)
	case server:
		peer, err = c.curveServer(keys, meta)
	default:
		peer, err = c.curveClient(keys, meta)
	}
	if err != nil {
		return nil, err
	}
	peerType := strings.ToUpper(string(peer["socket-type"]))
	if id := peer["identity"]; len(id) > maxIdentity {
		return nil, fmt.Errorf("peer's identity has %d bytes, above libzmq's limit of %d", len(id), maxIdentity)
	}
	for _, ok := range peersOf[sockType] {
		if peerType == ok {
			return peer["identity"], nil
		}
	}
	return nil, fmt.Errorf("a %s socket cannot talk to a %q socket", sockType, peerType)
}

// nullReady is NULL's exchange of READY commands, which carry the
// metadata in clear.
func (c *conn) nullReady(props []byte) (map[string][]byte, error) {
	if err := c.writeCommand("READY", props); err != nil {
		return nil, fmt.Errorf("send READY: %w", err)
	}
	body, err := c.expectCommand("READY")
	if err != nil {
		return nil, err
	}
	peer, err := parseProperties(body)
	if err != nil {
		return nil, fmt.Errorf("peer's READY: %w", err)
	}
	return peer, nil
}

// expectCommand reads the handshake command name and returns its data; an
// ERROR in its place is the peer refusing the connection.
func (c *conn) expectCommand(name string) ([]byte, error) {
	got, data, err := c.readCommand()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if got == "ERROR" {
		return nil, refused("peer refused the connection: %q", errorReason(data))
	}
	if got != name {
		return nil, fmt.Errorf("peer sent %q where %s belongs", got, name)
	}
	return data, nil
}

// encodeProperties is READY's metadata: name length (1 byte), name, value
// length (4 bytes, big endian), value.
func encodeProperties(props map[string][]byte) []byte {
	var b []byte
	for _, name := range []string{"Socket-Type", "Identity"} {
		v, ok := props[name]
		if !ok {
			continue
		}
		b = append(b, byte(len(name)))
		b = append(b, name...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

// parseProperties reads READY's metadata; names come back in lower case
// (the spec makes them case-insensitive).
func parseProperties(b []byte) (map[string][]byte, error) {
	props := map[string][]byte{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, fmt.Errorf("property list cut short")
		}
		name := strings.ToLower(string(b[1 : 1+n]))
		b = b[1+n:]
		vlen := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(len(b)) < uint64(vlen) {
			return nil, fmt.Errorf("property %q cut short", name)
		}
		props[name] = b[:vlen:vlen]
		b = b[vlen:]
	}
	return props, nil
}

// errorReason is an ERROR command's reason (1-byte length, text).
func errorReason(body []byte) string {
	if len(body) == 0 || len(body) < 1+int(body[0]) {
		return ""
	}
	return string(body[1 : 1+int(body[0])])
}
