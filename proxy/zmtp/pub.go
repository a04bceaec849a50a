package zmtp

import (
	"sync"
)

// Pub is a bound PUB socket: Send writes a message to every subscriber
// whose subscriptions match its first frame.
type Pub struct {
	l       *listener
	welcome Welcome

	mu   sync.RWMutex
	subs map[*conn]*subscriber
}

// Welcome gives the message a new subscription is greeted with, as an
// XPUB's owner would send it (JEP 65's iopub_welcome), or nil for none.
type Welcome func(topic []byte) [][]byte

// maxTopics bounds one subscriber's subscriptions: a Jupyter client makes
// one (""), and a peer needs no key to connect.
const maxTopics = 1024

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

// match looks up each prefix of topic, so its cost follows the topic's
// length, not the number of subscriptions.
func (s *subscriptions) match(topic []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i <= len(topic); i++ {
		if s.topics[string(topic[:i])] > 0 {
			return true
		}
	}
	return false
}

// add counts a subscription to topic and reports whether it is new; false
// also when the subscriber already has maxTopics others.
func (s *subscriptions) add(topic string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.topics[topic]; n > 0 || len(s.topics) < maxTopics {
		s.topics[topic] = n + 1
		return n == 0
	}
	return false
}

func (s *subscriptions) remove(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.topics[topic]--; s.topics[topic] <= 0 {
		delete(s.topics, topic)
	}
}

// ListenPub binds a PUB at ep ("tcp://host:port" or "ipc://path"); welcome,
// if not nil, greets each new subscription.
func ListenPub(ep string, welcome Welcome, log Logger, opts ...Option) (*Pub, error) {
	p := &Pub{subs: map[*conn]*subscriber{}, welcome: welcome}
	l, err := listen(ep, typePub, log, opts, func(c *conn, _ []byte) error { return p.serve(c, log) })
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
		topic := frames[0][1:]
		switch frames[0][0] {
		case 1:
			if s.add(string(topic)) {
				p.greet(s, topic)
			}
		case 0:
			s.remove(string(topic))
		}
	}
}

// greet sends s the welcome for its new subscription to topic.
func (p *Pub) greet(s *subscriber, topic []byte) {
	if p.welcome == nil {
		return
	}
	if frames := p.welcome(topic); frames != nil {
		s.out.put(frames)
	}
}

// WelcomeAll greets every subscription already made: the welcome's owner
// has only now learnt that it has one to give.
func (p *Pub) WelcomeAll() {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range p.subs {
		s.mu.Lock()
		topics := make([]string, 0, len(s.topics))
		for t := range s.topics {
			topics = append(topics, t)
		}
		s.mu.Unlock()
		for _, t := range topics {
			p.greet(s, []byte(t))
		}
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
