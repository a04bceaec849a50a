package zmtp

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
)

// Router is a bound ROUTER socket: it hands each message to the handler
// with the sending peer's identity as its first frame, and Send routes a
// message to the peer its first frame names.
type Router struct {
	l *listener

	mu    sync.RWMutex
	peers map[string]*routed
	next  uint32 // for identities of peers that give none
}

// routed is a peer with its identity: its connection and outbox.
type routed struct {
	c   *conn
	out *outbox
}

// VerifyingHandler takes each message a Router's peer sends, as Handler
// does, and says whether it was verified (signed with the kernel's key):
// the first verified message of a connection proves it, and those that
// share its identity on the other Routers of the same Limits, and trusts
// it with memory (limits.go).
type VerifyingHandler func(frames [][]byte) (verified bool)

// ListenRouter binds a ROUTER at ep ("tcp://host:port" or "ipc://path").
func ListenRouter(ep string, handle VerifyingHandler, log Logger, opts ...Option) (*Router, error) {
	r := &Router{peers: map[string]*routed{}}
	l, err := listen(ep, typeRouter, log, opts, budget{free: freeBytes, max: maxUnverified}, "verified message",
		func(a *admitted, identity []byte) error { return r.serve(a, identity, handle) })
	if err != nil {
		return nil, err
	}
	r.l = l
	return r, nil
}

func (r *Router) serve(a *admitted, identity []byte, handle VerifyingHandler) error {
	c, l := a.c, a.l // not r.l: this may run before ListenRouter sets it
	id, peer := r.register(c, identity, l)
	if peer == nil {
		// As libzmq's ROUTER does: the identity stays with the peer that
		// has it, and the newcomer is heard no further.
		l.lines.Printf("identity", "ROUTER on %s: %s has identity %s, which another peer has: ignored",
			c.LocalAddr(), peerName(c), shortID(id))
		for {
			if _, err := c.readMsg(); err != nil {
				return err
			}
		}
	}
	// An identity the peer chose is vouched for by a verified message
	// from it on another socket; a generated one names this peer only.
	chosen := id == string(identity)
	if chosen && l.limits.registered(id, a) {
		a.prove()
	}
	defer func() {
		if chosen {
			l.limits.unregistered(id, a, c.trusted)
		}
		r.unregister(peer, id)
	}()
	for {
		frames, err := c.readMsg()
		if err != nil {
			return err
		}
		if handle(append([][]byte{[]byte(id)}, frames...)) && !c.trusted {
			c.trusted = true
			a.prove()
			if chosen {
				l.limits.verified(id)
			}
		}
	}
}

// shortID is an identity for a log line: a peer chooses up to 255 bytes
// of it, and its first ones tell it from another.
func shortID(id string) string {
	const keep = 16
	if len(id) <= keep {
		return strconv.Quote(id)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(id[:keep]), len(id))
}

// register names the connection by the identity its peer gave or, as
// libzmq does, by a generated one (a zero byte, then a counter), also for
// a peer whose identity starts with a zero byte, so it cannot take one
// that is generated. It returns no peer if another connection has that
// identity already.
func (r *Router) register(c *conn, identity []byte, l *listener) (string, *routed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := string(identity)
	if id == "" || id[0] == 0 { // libzmq keeps ids starting with 0 for its own
		r.next++
		id = string(binary.BigEndian.AppendUint32([]byte{0}, r.next))
	}
	if r.peers[id] != nil {
		return id, nil
	}
	p := &routed{c: c, out: newOutbox(c, fmt.Sprintf("ROUTER on %s: %s (identity %s)", c.LocalAddr(), peerName(c), shortID(id)), l.lines)}
	r.peers[id] = p
	return id, p
}

func (r *Router) unregister(p *routed, id string) {
	r.mu.Lock()
	if r.peers[id] == p {
		delete(r.peers, id)
	}
	r.mu.Unlock()
	p.out.close()
}

// Send queues frames[1:] for the peer named by frames[0] (see outbox) and
// returns without waiting for it. As with libzmq's ROUTER, a message for a
// peer that is gone is dropped without error.
func (r *Router) Send(frames [][]byte) error {
	if len(frames) < 2 {
		return nil
	}
	r.mu.RLock()
	p := r.peers[string(frames[0])]
	r.mu.RUnlock()
	if p != nil {
		p.out.put(frames[1:])
	}
	return nil
}

// Endpoint is where the Router listens, as a peer dials it.
func (r *Router) Endpoint() string { return r.l.endpoint() }

// Close unbinds the socket, closes its connections and waits for their
// handlers to return.
func (r *Router) Close() error { return r.l.close() }

// Echo is a bound ROUTER that sends every message back to its sender: a
// heartbeat. Any number of REQ or DEALER peers may ping it at once.
type Echo struct{ l *listener }

// ListenEcho binds an Echo at ep. A peer's first ping proves it. Its
// pings are held as a Router's untrusted messages are: a ping is a few
// bytes, but a heartbeat echoes whatever it is sent, as ipykernel's does.
func ListenEcho(ep string, log Logger, opts ...Option) (*Echo, error) {
	l, err := listen(ep, typeRouter, log, opts, budget{free: freeBytes, max: maxUnverified}, "ping",
		func(a *admitted, _ []byte) error {
			for {
				frames, err := a.c.readMsg()
				if err != nil {
					return err
				}
				if err := a.c.writeMsg(frames); err != nil {
					return err
				}
				a.prove()
			}
		})
	if err != nil {
		return nil, err
	}
	return &Echo{l: l}, nil
}

// Endpoint is where the Echo listens.
func (e *Echo) Endpoint() string { return e.l.endpoint() }

// Close unbinds the socket and closes its connections.
func (e *Echo) Close() error { return e.l.close() }
