package zmtp

import (
	"bytes"
	"sync"
)

// Pub is a bound PUB socket: Send writes a message to every subscriber
// whose subscriptions match its first frame.
type Pub struct {
	l *listener

	mu   sync.RWMutex
	subs map[*conn]*subscriber
}

// subscriber is one peer: what it subscribed to, and its outbox.
type subscriber struct {
	subscriptions
	out *outbox
}

// subscriptions are one subscriber's topic prefixes, each with how many
// times it was subscribed.
type subscriptions struct {
	mu     sync.Mutex
	topics map[string]int
}

func (s *subscriptions) match(topic []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.topics {
		if bytes.HasPrefix(topic, []byte(t)) {
			return true
		}
	}
	return false
}

// ListenPub binds a PUB at ep ("tcp://host:port" or "ipc://path").
func ListenPub(ep string, log Logger) (*Pub, error) {
	p := &Pub{subs: map[*conn]*subscriber{}}
	l, err := listen(ep, typePub, log, func(c *conn, _ []byte) error { return p.serve(c, log) })
	if err != nil {
		return nil, err
	}
	p.l = l
	return p, nil
}

// serve follows one subscriber's subscriptions until it leaves.
func (p *Pub) serve(c *conn, log Logger) error {
	s := &subscriber{subscriptions: subscriptions{topics: map[string]int{}},
		out: newOutbox(c, "PUB on "+c.LocalAddr().String()+": "+peerName(c), log)}
	p.mu.Lock()
	p.subs[c] = s
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.subs, c)
		p.mu.Unlock()
		s.out.close()
	}()
	for {
		frames, err := c.readMsg()
		if err != nil {
			return err
		}
		if len(frames) != 1 || len(frames[0]) == 0 {
			continue // a SUB sends nothing else
		}
		topic := string(frames[0][1:])
		s.mu.Lock()
		switch frames[0][0] {
		case 1:
			s.topics[topic]++
		case 0:
			if s.topics[topic]--; s.topics[topic] <= 0 {
				delete(s.topics, topic)
			}
		}
		s.mu.Unlock()
	}
}

// Send queues frames for each matching subscriber (see outbox) and
// returns without waiting for any. It reports no error, as a PUB socket
// does: a subscriber that has gone, or does not read, misses the message.
func (p *Pub) Send(frames [][]byte) error {
	if len(frames) == 0 {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range p.subs {
		if s.match(frames[0]) {
			s.out.put(frames)
		}
	}
	return nil
}

// Close unbinds the socket and closes its connections.
func (p *Pub) Close() error { return p.l.close() }
