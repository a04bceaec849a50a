package zmtp_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// rawPeer is a ZMTP peer that writes whatever bytes a test gives it: what
// a broken or hostile client, or a ZMTP 3.1 one, sends and the package's
// own dialler never would.
type rawPeer struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// dialRaw connects to a socket under test. Every read and write has a
// deadline, so a peer the socket never answers fails the test instead of
// hanging it.
func dialRaw(t *testing.T, ep string) *rawPeer {
	t.Helper()
	network, addr := "tcp", strings.TrimPrefix(ep, "tcp://")
	if path, ok := strings.CutPrefix(ep, "ipc://"); ok {
		network, addr = "unix", path
	}
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(patience)); err != nil {
		t.Fatal(err)
	}
	return &rawPeer{t: t, c: c, r: bufio.NewReader(c)}
}

func (p *rawPeer) write(chunks ...[]byte) {
	p.t.Helper()
	for _, b := range chunks {
		if _, err := p.c.Write(b); err != nil {
			p.t.Fatalf("raw peer write: %v", err)
		}
	}
}

// handshake greets as a ZMTP 3.minor peer of sockType and reads the
// socket's greeting and READY.
func (p *rawPeer) handshake(sockType string, minor byte) {
	p.t.Helper()
	p.write(zmtp.GreetingFor(3, minor, "NULL"), zmtp.Ready(sockType, ""))
	p.readGreeting()
	flags, body := p.readFrame()
	if flags&zmtp.FlagCmd == 0 || !strings.HasPrefix(string(body), "\x05READY") {
		p.t.Fatalf("got %q (flags %#x) where READY belongs", body, flags)
	}
}

// readGreeting reads the socket's greeting and checks its signature.
func (p *rawPeer) readGreeting() {
	p.t.Helper()
	var g [64]byte
	if _, err := io.ReadFull(p.r, g[:]); err != nil {
		p.t.Fatalf("read greeting: %v", err)
	}
	if g[0] != 0xff || g[9] != 0x7f || g[10] != 3 {
		p.t.Fatalf("greeting % x is not ZMTP 3", g[:12])
	}
}

func (p *rawPeer) readFrame() (flags byte, body []byte) {
	p.t.Helper()
	flags, err := p.r.ReadByte()
	if err != nil {
		p.t.Fatalf("raw peer read: %v", err)
	}
	var size uint64
	if flags&zmtp.FlagLong != 0 {
		var b [8]byte
		_, err = io.ReadFull(p.r, b[:])
		size = binary.BigEndian.Uint64(b[:])
	} else {
		var b byte
		b, err = p.r.ReadByte()
		size = uint64(b)
	}
	if err != nil {
		p.t.Fatalf("raw peer read: %v", err)
	}
	body = make([]byte, size)
	if _, err := io.ReadFull(p.r, body); err != nil {
		p.t.Fatalf("raw peer read: %v", err)
	}
	return flags, body
}

// readMsg is the next message; there are no commands after READY.
func (p *rawPeer) readMsg() [][]byte {
	p.t.Helper()
	var frames [][]byte
	for {
		flags, body := p.readFrame()
		frames = append(frames, body)
		if flags&zmtp.FlagMore == 0 {
			return frames
		}
	}
}

// waitDropped reads until the socket closes the connection; the test
// fails if it is still open after patience.
func (p *rawPeer) waitDropped() {
	p.t.Helper()
	_, err := io.Copy(io.Discard, p.r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.t.Fatalf("connection still open after %v", patience)
	}
	// nil is EOF; a reset is also a close.
}
