package zmtp

import (
	"container/list"
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

// failureReport is how often a socket logs each kind of trouble with its
// peers, at most.
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

// listener accepts connections for a bound socket, within its Limits
// (limits.go), shakes hands with each on its own goroutine, and serves it
// until it ends.
type listener struct {
	ln       net.Listener
	sockType string
	curve    *Curve // the server's keys, or nil for NULL
	limits   *Limits
	// msgBudget is what an untrusted connection's message may hold here.
	msgBudget budget
	// proof names what proves a connection here ("verified message"), for
	// the lines about those that have not sent one.
	proof string
	// lines logs what peers did, each kind at most once per failureReport
	// with a count of the rest: a flood of bad peers gets a line now and
	// then, not one each.
	lines *ratelog.Limiter
	// serve runs on the connection's goroutine after the handshake, with
	// the peer's identity, until the connection ends, and returns the read
	// error that ended it.
	serve func(a *admitted, identity []byte) error

	mu       sync.Mutex
	conns    map[*conn]*admitted
	unproven list.List // of *admitted, oldest first
	closed   bool
	wg       sync.WaitGroup
}

// admitted is an accepted connection and what it has shown (limits.go).
type admitted struct {
	l      *listener
	c      *conn
	at     time.Time
	proven bool
	elem   *list.Element // in l.unproven while unproven
	// overdue fires at the proof time, unless it is proven first; nil for
	// a connection that came while fewer than keepUnproven were unproven.
	overdue *time.Timer
}

func listen(ep, sockType string, log Logger, opts []Option, msgBudget budget, proof string, serve func(*admitted, []byte) error) (*listener, error) {
	o, err := optionsOf(opts)
	if err != nil {
		return nil, err
	}
	if o.limits == nil {
		o.limits = NewLimits(1)
	}
	if msgBudget.max > freeBytes {
		msgBudget.pool = &o.limits.pool
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
	l := &listener{ln: ln, sockType: sockType, curve: o.curve, limits: o.limits, msgBudget: msgBudget, proof: proof,
		serve: serve, conns: map[*conn]*admitted{}, lines: ratelog.New(log, failureReport)}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func (l *listener) accept() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, say: the connection waits in the listen
			// queue, and trying again at once would spin.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.lines.Printf("accept", "%s on %s: accept: %s; trying again in %v", l.sockType, l.ln.Addr(), acceptTrouble(err), backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if a := l.admit(nc); a != nil {
			go l.run(a)
		}
	}
}

// acceptTrouble says why accept failed, in words.
func acceptTrouble(err error) string {
	var rl syscall.Rlimit
	switch {
	case errors.Is(err, syscall.EMFILE) && syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil:
		return fmt.Sprintf("the proxy has all the %d file descriptors it may open (EMFILE)", rl.Cur)
	case errors.Is(err, syscall.ENFILE):
		return "the system is out of file descriptors (ENFILE)"
	}
	return err.Error()
}

// admit takes a new connection if the socket has a slot for it, closing
// the oldest unproven connection to make one if need be; else it refuses
// it (closes it) and returns nil.
func (l *listener) admit(nc net.Conn) *admitted {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		nc.Close()
		return nil
	}
	if len(l.conns) >= l.limits.perSocket {
		oldest := l.unproven.Front()
		if oldest == nil {
			nc.Close()
			l.lines.Printf("full", "%s on %s: %d peers, each has sent a %s: a new one refused, %s",
				l.sockType, l.ln.Addr(), len(l.conns), l.proof, addrName(nc.RemoteAddr()))
			return nil
		}
		victim := oldest.Value.(*admitted)
		l.forget(victim)
		victim.c.Close()
		l.lines.Printf("evicted", "%s on %s: %d peers; the oldest with no %s yet (%s, connected %v ago) closed to make room for a new one",
			l.sockType, l.ln.Addr(), l.limits.perSocket, l.proof, peerName(victim.c), time.Since(victim.at).Round(time.Millisecond))
	}
	c := newConn(nc, acceptedReadBuffer, l.msgBudget)
	a := &admitted{l: l, c: c, at: time.Now()}
	// Among the first unproven peers, a connection may stay unproven: it
	// needs no timer (and an idle proxy no wake-up for it).
	if l.unproven.Len() >= l.limits.keepUnproven {
		a.overdue = time.AfterFunc(l.limits.proofTime, func() { l.overdue(a) })
	}
	a.elem = l.unproven.PushBack(a)
	l.conns[c] = a
	l.wg.Add(1)
	return a
}

// forget takes a out of the socket's slots. Call with l.mu held.
func (l *listener) forget(a *admitted) {
	a.stopOverdue()
	delete(l.conns, a.c)
	l.unproven.Remove(a.elem) // a no-op once it is out
}

// overdue closes a, unproven at the proof time, unless it is now among the
// keepUnproven that connected first (limits.go).
func (l *listener) overdue(a *admitted) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.proven || l.conns[a.c] != a {
		return
	}
	older := 0
	for e := a.elem.Prev(); e != nil && older < l.limits.keepUnproven; e = e.Prev() {
		older++
	}
	if older < l.limits.keepUnproven {
		return
	}
	l.forget(a)
	a.c.Close()
	l.lines.Printf("unproven", "%s on %s: %s sent no %s within %v of connecting, and %d peers before it have not either; connection closed",
		l.sockType, l.ln.Addr(), peerName(a.c), l.proof, l.limits.proofTime, older)
}

func (l *listener) run(a *admitted) {
	c := a.c
	defer func() {
		c.Close()
		c.budget.settle()
		l.mu.Lock()
		l.forget(a)
		l.mu.Unlock()
		l.wg.Done()
	}()
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	identity, err := c.handshake(l.sockType, nil, l.curve, true)
	if err != nil {
		if !errors.Is(err, net.ErrClosed) { // closed for a newcomer: said so then
			l.lines.Printf("handshake", "%s on %s: %s: %v; connection dropped", l.sockType, l.ln.Addr(), peerName(c), err)
		}
		return
	}
	_ = c.SetDeadline(time.Time{})
	c.budget.settle()
	if err := l.serve(a, identity); !hungUp(err) {
		l.lines.Printf("read", "%s on %s: %s: %v; connection dropped", l.sockType, l.ln.Addr(), peerName(c), err)
	}
}

// prove marks a as shown to be a frontend: it keeps its slot. Any
// goroutine may call it.
func (a *admitted) prove() {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.proven {
		return
	}
	a.proven = true
	a.stopOverdue()
	l.unproven.Remove(a.elem)
}

func (a *admitted) stopOverdue() {
	if a.overdue != nil {
		a.overdue.Stop()
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
func peerName(c *conn) string { return addrName(c.RemoteAddr()) }

func addrName(a net.Addr) string {
	if a != nil && a.Network() == "tcp" {
		return "a peer from " + a.String()
	}
	return "a local peer" // a unix socket's client has no address
}

// endpoint is where the socket listens, as a peer dials it: for a socket
// bound to port 0.
func (l *listener) endpoint() string {
	if a := l.ln.Addr(); a.Network() == "unix" {
		return "ipc://" + a.String()
	}
	return "tcp://" + l.ln.Addr().String()
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
	o, network, addr, err := dialTarget(ep, opts)
	if err != nil {
		return nil, err
	}
	var last error // why the last try failed, when ctx ends during the next
	for {
		c, err := dialOnce(ctx, network, addr, sockType, identity, o.curve, bufSize)
		if err == nil {
			return c, nil
		}
		var se *securityError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s %s: %w", sockType, ep, err)
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

// dialTarget is a dial's options, and its endpoint for package net.
func dialTarget(ep string, opts []Option) (o options, network, addr string, err error) {
	if o, err = optionsOf(opts); err != nil {
		return o, "", "", err
	}
	network, addr, err = splitEndpoint(ep)
	return o, network, addr, err
}

// dialOnce connects once and shakes hands, within ctx. The connection it
// returns is trusted: it has shown it is the peer dialled (the proxy dials
// only its own child kernel).
func dialOnce(ctx context.Context, network, addr, sockType string, identity []byte, keys *Curve, readBuffer int) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	// Before it has shaken hands, what it sends is held to commands of
	// maxCommand bytes: a kernel's READY is far smaller.
	c := newConn(nc, readBuffer, budget{free: maxCommand, max: maxCommand})
	if deadline, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	_, err = c.handshake(sockType, identity, keys, false)
	if !stop() || err != nil {
		c.Close()
		if err == nil {
			err = context.Cause(ctx)
		}
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	c.budget.settle()
	c.trusted = true
	return c, nil
}
