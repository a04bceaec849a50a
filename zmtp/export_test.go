package zmtp

import (
	"net"
	"time"
)

// What the external tests (package zmtp_test) need from inside: the sizes
// writeMsg and readFrame switch at and the bounds on peers; the wire
// format by hand; a handshake on a connection of the test's; and a look at
// a socket's connections and a Pub's subscriptions, so a test can wait for
// one to arrive instead of sleeping.

const (
	InlineMax      = inlineMax
	BufSize        = bufSize
	MaxFrame       = maxFrame
	MaxUnverified  = maxUnverified
	UnverifiedPool = unverifiedPool
	FreeBytes      = freeBytes
	MaxTopic       = maxTopic
	MaxTopicBytes  = maxTopicBytes
	ProofTime      = proofTime
	FlagMore       = flagMore
	FlagLong       = flagLong
	FlagCmd        = flagCommand
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
	c := newConn(nc, bufSize, budget{free: maxCommand, max: maxCommand})
	if _, err := c.handshake(typeDealer, nil, keys, false); err != nil {
		return nil, err
	}
	return c.writeMsg, nil
}

// LimitsOf is NewLimits with perSocket slots, the given proof time and
// keep unproven peers kept past it, for tests that fill a socket or wait
// for a deadline.
func LimitsOf(perSocket int, proof time.Duration, keep int) *Limits {
	l := NewLimits(1)
	l.perSocket, l.proofTime, l.keepUnproven = perSocket, proof, keep
	return l
}

// Conns is how many connections the Router has, handshaking or served.
func (r *Router) Conns() int {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return len(r.l.conns)
}

// Unproven is how many of the Router's peers have shown nothing yet.
func (r *Router) Unproven() int {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.unproven.Len()
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
