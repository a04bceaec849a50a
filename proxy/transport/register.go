package transport

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-zeromq/zmq4"
)

// zmq4 refuses to register a name twice, so "tcp" and "ipc" cannot be
// replaced; the buffered transports live under their own schemes.
const (
	SchemeTCP = "tcpb" // tcp:// with buffered, once-per-message I/O
	SchemeIPC = "ipcb" // ipc:// (unix sockets) with the same
)

var schemes = map[string]struct{ buffered, network string }{
	"tcp": {SchemeTCP, "tcp"},
	"ipc": {SchemeIPC, "unix"},
}

var (
	registerOnce sync.Once
	registerErr  error
)

// init registers the schemes as soon as the package is imported, so
// tcpb:// and ipcb:// endpoints work even when written out by hand. It
// cannot report a failure (a name already taken); Register and Endpoint
// return it to whoever asks.
func init() { _ = Register() }

// Register adds the buffered transports to zmq4's registry and reports
// whether that worked. It is safe to call any number of times from any
// goroutine; it only registers once.
func Register() error {
	registerOnce.Do(func() {
		for _, s := range schemes {
			if err := zmq4.RegisterTransport(s.buffered, newBufferedTransport(s.network)); err != nil {
				registerErr = fmt.Errorf("register %s transport: %w", s.buffered, err)
				return
			}
		}
	})
	return registerErr
}

// Endpoint rewrites a tcp:// or ipc:// endpoint, as found in a Jupyter
// connection file, to the buffered transport ("tcp://127.0.0.1:5555"
// becomes "tcpb://127.0.0.1:5555") and makes sure that transport is
// registered, so the result can go straight to Socket.Listen or Dial.
// An endpoint already on a buffered scheme comes back unchanged.
func Endpoint(ep string) (string, error) {
	scheme, addr, ok := strings.Cut(ep, "://")
	if !ok {
		return "", fmt.Errorf("endpoint %q: no scheme", ep)
	}
	if scheme == SchemeTCP || scheme == SchemeIPC {
		return ep, Register()
	}
	s, ok := schemes[scheme]
	if !ok {
		return "", fmt.Errorf("endpoint %q: scheme %q is not tcp or ipc", ep, scheme)
	}
	if err := Register(); err != nil {
		return "", err
	}
	return s.buffered + "://" + addr, nil
}
