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
	subs map[*conn]*subscriptions
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
	p := &Pub{subs: map[*conn]*subscriptions{}}
	l, err := listen(ep, typePub, log, p.serve)
	if err != nil {
		return nil, err
	}
	p.l = l
	return p, nil
}

// serve follows one subscriber's subscriptions until it leaves.
func (p *Pub) serve(c *conn, _ []byte) {
	s := &subscriptions{topics: map[string]int{}}
	p.mu.Lock()
	p.subs[c] = s
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.subs, c)
		p.mu.Unlock()
	}()
	for {
		frames, err := c.readMsg()
		if err != nil {
			return
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

// Send publishes frames to the matching subscribers. A subscriber whose
// connection fails is dropped; the others still get the message, and Send
// reports no error, as a PUB socket does.
func (p *Pub) Send(frames [][]byte) error {
	if len(frames) == 0 {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for c, s := range p.subs {
		if s.match(frames[0]) {
			_ = c.writeMsg(frames) // a failed write closes c, which ends its serve
		}
	}
	return nil
}

// Close unbinds the socket and closes its connections.
func (p *Pub) Close() error { return p.l.close() }
