package zmtp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/ratelog"
)

// handshakeTimeout bounds a new connection's greeting and handshake
// commands, so a peer that connects and says nothing holds nothing but its
// own goroutine.
const handshakeTimeout = 10 * time.Second

// failureReport is how often a socket logs peers it dropped, at most.
const failureReport = 10 * time.Second

// Handler takes each message a peer sends, on that connection's own
// goroutine; the frames are the handler's to keep. Messages from one
// connection arrive in order, from different connections concurrently.
type Handler func(frames [][]byte)

// Logger reports what goes wrong with a peer, one line each.
type Logger func(format string, args ...any)

// splitEndpoint turns "tcp://host:port" or "ipc://path" into a network and
// an address for package net.
func splitEndpoint(ep string) (network, addr string, err error) {
	scheme, addr, ok := strings.Cut(ep, "://")
	switch {
	case !ok:
		return "", "", fmt.Errorf("endpoint %q: no scheme", ep)
	case scheme == "tcp":
		if host, port, err := net.SplitHostPort(addr); err == nil && host == "*" {
			addr = net.JoinHostPort("", port) // libzmq's "every interface"
		}
		return "tcp", addr, nil
	case scheme == "ipc":
		return "unix", addr, nil
	}
	return "", "", fmt.Errorf("endpoint %q: scheme %q is not tcp or ipc", ep, scheme)
}

// listener accepts connections for a bound socket, shakes hands with each
// on its own goroutine, and serves it until it ends.
type listener struct {
	ln       net.Listener
	sockType string
	curve    *Curve // the server's keys, or nil for NULL
	log      Logger
	// failures logs handshakes that fail: a flood of bad peers gets a line
	// now and then, not one each.
	failures *ratelog.Limiter
	// serve runs on the connection's goroutine after the handshake, with
	// the peer's identity, until the connection ends, and returns the read
	// error that ended it.
	serve func(c *conn, identity []byte) error

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func listen(ep, sockType string, log Logger, opts []Option, serve func(*conn, []byte) error) (*listener, error) {
	o, err := optionsOf(opts)
	if err != nil {
		return nil, err
	}
	network, addr, err := splitEndpoint(ep)
	if err != nil {
		return nil, err
	}
	if network == "unix" {
		if err := RemoveStaleSocket(addr); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	l := &listener{ln: ln, sockType: sockType, curve: o.curve, log: log, serve: serve, conns: map[*conn]struct{}{},
		failures: ratelog.New(log, failureReport)}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func (l *listener) accept() {
	defer l.wg.Done()
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			l.log("%s on %s: accept: %v", l.sockType, l.ln.Addr(), err)
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: not a busy loop
			continue
		}
		c := newConn(nc)
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			nc.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.run(c)
	}
}

func (l *listener) run(c *conn) {
	defer func() {
		c.Close()
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		l.wg.Done()
	}()
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	identity, err := c.handshake(l.sockType, nil, l.curve, true)
	if err != nil {
		l.failures.Printf("handshake", "%s on %s: %s: %v; connection dropped", l.sockType, l.ln.Addr(), peerName(c), err)
		return
	}
	_ = c.SetDeadline(time.Time{})
	if err := l.serve(c, identity); !hungUp(err) {
		l.failures.Printf("read", "%s on %s: %s: %v; connection dropped", l.sockType, l.ln.Addr(), peerName(c), err)
	}
}

// hungUp tells a connection that ended, by either side, from one dropped
// for what its peer sent.
func hungUp(err error) bool {
	for _, end := range []error{io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, ErrClosed, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, end) {
			return true
		}
	}
	return false
}

// peerName says who is on the other end of c, for a log line.
func peerName(c *conn) string {
	if a := c.RemoteAddr(); a != nil && a.Network() == "tcp" {
		return "a peer from " + a.String()
	}
	return "a local peer" // a unix socket's client has no address
}

// close stops accepting, closes every connection and waits for their
// goroutines, handlers included, to return.
func (l *listener) close() error {
	l.mu.Lock()
	l.closed = true
	err := l.ln.Close()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// Dial connects to a socket bound at ep as a socket of sockType ("DEALER"
// or "SUB"), retrying every retry while nobody listens there yet, until
// ctx ends. A handshake refused for its mechanism or keys is not retried.
func dial(ctx context.Context, ep, sockType string, identity []byte, retry time.Duration, opts []Option) (*conn, error) {
	o, err := optionsOf(opts)
	if err != nil {
		return nil, err
	}
	network, addr, err := splitEndpoint(ep)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var last error // why the last try failed, when ctx ends during the next
	for {
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			c := newConn(nc)
			if deadline, ok := ctx.Deadline(); ok {
				_ = c.SetDeadline(deadline)
			}
			stop := context.AfterFunc(ctx, func() { c.Close() })
			_, err = c.handshake(sockType, identity, o.curve, false)
			if stop() && err == nil {
				_ = c.SetDeadline(time.Time{})
				// Trusted only once it has shown it is the peer dialled:
				// the proxy dials only its own child kernel.
				c.trusted = true
				return c, nil
			}
			c.Close()
			var se *securityError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s %s: %w", sockType, ep, err)
			}
		}
		if ctx.Err() != nil {
			if last == nil {
				last = err
			}
			return nil, fmt.Errorf("%s %s: %w (last: %v)", sockType, ep, context.Cause(ctx), last)
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}
