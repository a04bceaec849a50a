package zmtp

import (
	"encoding/binary"
	"sync"
)

// Router is a bound ROUTER socket: it hands each message to the handler
// with the sending peer's identity as its first frame, and Send routes a
// message to the peer its first frame names.
type Router struct {
	l *listener

	mu    sync.RWMutex
	peers map[string]*conn
	next  uint32 // for identities of peers that give none
}

// ListenRouter binds a ROUTER at ep ("tcp://host:port" or "ipc://path").
func ListenRouter(ep string, handle Handler, log Logger) (*Router, error) {
	r := &Router{peers: map[string]*conn{}}
	l, err := listen(ep, typeRouter, log, func(c *conn, identity []byte) { r.serve(c, identity, handle, log) })
	if err != nil {
		return nil, err
	}
	r.l = l
	return r, nil
}

func (r *Router) serve(c *conn, identity []byte, handle Handler, log Logger) {
	id, ok := r.register(c, identity)
	if !ok {
		// As libzmq's ROUTER does: the identity stays with the peer that
		// has it, and the newcomer is heard no further.
		log("ROUTER on %s: %s has identity %q, which another peer has: ignored", c.LocalAddr(), peerName(c), id)
		for {
			if _, err := c.readMsg(); err != nil {
				return
			}
		}
	}
	defer r.unregister(c, id)
	for {
		frames, err := c.readMsg()
		if err != nil {
			return
		}
		handle(append([][]byte{[]byte(id)}, frames...))
	}
}

// register names the connection by the identity its peer gave or, as
// libzmq does, by a generated one (a zero byte, then a counter), also for
// a peer whose identity starts with a zero byte, so it cannot take one
// that is generated. It
// reports false if another connection has that identity already.
func (r *Router) register(c *conn, identity []byte) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := string(identity)
	if id == "" || id[0] == 0 { // libzmq keeps ids starting with 0 for its own
		r.next++
		id = string(binary.BigEndian.AppendUint32([]byte{0}, r.next))
	}
	if r.peers[id] != nil {
		return id, false
	}
	r.peers[id] = c
	return id, true
}

func (r *Router) unregister(c *conn, id string) {
	r.mu.Lock()
	if r.peers[id] == c {
		delete(r.peers, id)
	}
	r.mu.Unlock()
}

// Send routes frames[1:] to the peer named by frames[0]. As with libzmq's
// ROUTER, a message for a peer that is gone is dropped without error.
func (r *Router) Send(frames [][]byte) error {
	if len(frames) < 2 {
		return nil
	}
	r.mu.RLock()
	c := r.peers[string(frames[0])]
	r.mu.RUnlock()
	if c == nil {
		return nil
	}
	return c.writeMsg(frames[1:])
}

// Close unbinds the socket, closes its connections and waits for their
// handlers to return.
func (r *Router) Close() error { return r.l.close() }

// Echo is a bound ROUTER that sends every message back to its sender: a
// heartbeat. Any number of REQ or DEALER peers may ping it at once.
type Echo struct{ l *listener }

// ListenEcho binds an Echo at ep.
func ListenEcho(ep string, log Logger) (*Echo, error) {
	l, err := listen(ep, typeRouter, log, func(c *conn, _ []byte) {
		for {
			frames, err := c.readMsg()
			if err != nil || c.writeMsg(frames) != nil {
				return
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
