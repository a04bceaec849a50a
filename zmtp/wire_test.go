package zmtp

import (
	"encoding/binary"
	"strings"
)

// The wire format written out by hand from the spec (rfc.zeromq.org/spec/23),
// not by the package's own encoders, so a test built on these does not
// share their mistakes. The external tests get them through export_test.go.

// frame is one frame: flags, a 1- or 8-byte size, the body.
func frame(flags byte, body []byte) []byte {
	if len(body) > 255 {
		b := binary.BigEndian.AppendUint64([]byte{flags | flagLong}, uint64(len(body)))
		return append(b, body...)
	}
	return append([]byte{flags, byte(len(body))}, body...)
}

// command is a command frame: name length, name, data.
func command(name string, data []byte) []byte {
	body := append([]byte{byte(len(name))}, name...)
	return frame(flagCommand, append(body, data...))
}

// greetingFor is a 64-byte greeting announcing version major.minor and
// mechanism mech, as a client.
func greetingFor(major, minor byte, mech string) []byte {
	g := make([]byte, 64)
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, major, minor
	copy(g[12:32], mech)
	return g
}

// ready is the READY command of a socket of sockType, with an Identity
// property when identity is not empty. Names go in mixed case: the spec
// makes them case-insensitive.
func ready(sockType, identity string) []byte {
	var props []byte
	add := func(name, value string) {
		props = append(props, byte(len(name)))
		props = append(props, name...)
		props = binary.BigEndian.AppendUint32(props, uint32(len(value)))
		props = append(props, value...)
	}
	add("socket-TYPE", strings.ToLower(sockType))
	if identity != "" {
		add("Identity", identity)
	}
	return command("READY", props)
}
