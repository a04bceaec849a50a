package zmtp

import "net"

// What the external tests (package zmtp_test, which may import zmq4's
// buffered transports where this package may not) need from inside:
// where a socket listens, since they bind port 0; the sizes writeMsg and
// readFrame switch at; the wire format by hand; a handshake on a
// connection of the test's; and a look at a Pub's subscriptions, so a test
// can wait for one to arrive instead of sleeping.

const (
	InlineMax = inlineMax
	BufSize   = bufSize
	MaxFrame  = maxFrame
	FlagMore  = flagMore
	FlagLong  = flagLong
	FlagCmd   = flagCommand
)

var (
	Frame       = frame
	Command     = command
	GreetingFor = greetingFor
	Ready       = ready
)

// ShakeHands is a DEALER's handshake over nc, with keys unchecked, and a
// function that sends on it: a client whose connection a test has a hand
// in, or whose keys are wrong.
func ShakeHands(nc net.Conn, keys *Curve) (send func([][]byte) error, err error) {
	c := newConn(nc)
	if _, err := c.handshake(typeDealer, nil, keys, false); err != nil {
		return nil, err
	}
	return c.writeMsg, nil
}

// Endpoint is where the Router listens, as a peer dials it.
func (r *Router) Endpoint() string { return r.l.endpoint() }

// Endpoint is where the Echo listens.
func (e *Echo) Endpoint() string { return e.l.endpoint() }

// Endpoint is where the Pub listens.
func (p *Pub) Endpoint() string { return p.l.endpoint() }

func (l *listener) endpoint() string {
	if a := l.ln.Addr(); a.Network() == "unix" {
		return "ipc://" + a.String()
	}
	return "tcp://" + l.ln.Addr().String()
}

// Conns is how many connections the Router has, handshaking or served.
func (r *Router) Conns() int {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return len(r.l.conns)
}

// Subscribers is how many subscribers the Pub has and how many of them a
// message on topic would reach.
func (p *Pub) Subscribers(topic string) (conns, matching int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range p.subs {
		conns++
		if s.match([]byte(topic)) {
			matching++
		}
	}
	return conns, matching
}
