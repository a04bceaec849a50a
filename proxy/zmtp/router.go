package zmtp

import (
	"encoding/binary"
	"fmt"
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

// ListenRouter binds a ROUTER at ep ("tcp://host:port" or "ipc://path").
func ListenRouter(ep string, handle Handler, log Logger, opts ...Option) (*Router, error) {
	r := &Router{peers: map[string]*routed{}}
	l, err := listen(ep, typeRouter, log, opts, func(c *conn, identity []byte) error { return r.serve(c, identity, handle, log) })
	if err != nil {
		return nil, err
	}
	r.l = l
	return r, nil
}

func (r *Router) serve(c *conn, identity []byte, handle Handler, log Logger) error {
	id, peer := r.register(c, identity, log)
	if peer == nil {
		// As libzmq's ROUTER does: the identity stays with the peer that
		// has it, and the newcomer is heard no further.
		log("ROUTER on %s: %s has identity %q, which another peer has: ignored", c.LocalAddr(), peerName(c), id)
		for {
			if _, err := c.readMsg(); err != nil {
				return err
			}
		}
	}
	defer r.unregister(peer, id)
	for {
		frames, err := c.readMsg()
		if err != nil {
			return err
		}
		handle(append([][]byte{[]byte(id)}, frames...))
	}
}

// register names the connection by the identity its peer gave or, as
// libzmq does, by a generated one (a zero byte, then a counter), also for
// a peer whose identity starts with a zero byte, so it cannot take one
// that is generated. It returns no peer if another connection has that
// identity already.
func (r *Router) register(c *conn, identity []byte, log Logger) (string, *routed) {
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
	p := &routed{c: c, out: newOutbox(c, fmt.Sprintf("ROUTER on %s: %s (identity %q)", c.LocalAddr(), peerName(c), id), log)}
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

// Close unbinds the socket, closes its connections and waits for their
// handlers to return.
func (r *Router) Close() error { return r.l.close() }

// Echo is a bound ROUTER that sends every message back to its sender: a
// heartbeat. Any number of REQ or DEALER peers may ping it at once.
type Echo struct{ l *listener }

// ListenEcho binds an Echo at ep.
func ListenEcho(ep string, log Logger, opts ...Option) (*Echo, error) {
	l, err := listen(ep, typeRouter, log, opts, func(c *conn, _ []byte) error {
		for {
			frames, err := c.readMsg()
			if err != nil {
				return err
			}
			if err := c.writeMsg(frames); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return &Echo{l: l}, nil
}

// Close unbinds the socket and closes its connections.
func (e *Echo) Close() error { return e.l.close() }
