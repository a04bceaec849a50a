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

// Bounds on one subscriber's subscriptions: a Jupyter client makes one
// (""), and a peer needs no key to subscribe. The longest topic a kernel
// publishes on is about 60 bytes ("kernel.<uuid>.status"); a longer
// subscription could never match, and is ignored.
const (
	maxTopics     = 1024
	maxTopic      = 256
	maxTopicBytes = 16 << 10 // all of one subscriber's topics
)

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
	bytes  int // of the topics
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

// add counts a subscription to topic and reports whether it is new; it is
// refused (ok false) if the subscriber has as many or as much as a
// subscriber may have already.
func (s *subscriptions) add(topic string) (isNew, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.topics[topic]
	if n == 0 && (len(s.topics) >= maxTopics || s.bytes+len(topic) > maxTopicBytes) {
		return false, false
	}
	if n == 0 {
		s.bytes += len(topic)
	}
	s.topics[topic] = n + 1
	return n == 0, true
}

func (s *subscriptions) remove(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.topics[topic]
	switch {
	case !ok:
	case n > 1:
		s.topics[topic] = n - 1
	default:
		delete(s.topics, topic)
		s.bytes -= len(topic)
	}
}

// ListenPub binds a PUB at ep ("tcp://host:port" or "ipc://path"); welcome,
// if not nil, greets each new subscription. A peer's first subscription
// proves it; a SUB sends nothing but subscriptions, so a peer may send
// freeBytes at most.
func ListenPub(ep string, welcome Welcome, log Logger, opts ...Option) (*Pub, error) {
	p := &Pub{subs: map[*conn]*subscriber{}, welcome: welcome}
	l, err := listen(ep, typePub, log, opts, budget{free: freeBytes, max: freeBytes}, "subscription",
		func(a *admitted, _ []byte) error { return p.serve(a) })
	if err != nil {
		return nil, err
	}
	p.l = l
	return p, nil
}

// serve follows one subscriber's subscriptions until it leaves.
func (p *Pub) serve(a *admitted) error {
	c, l := a.c, a.l // not p.l: this may run before ListenPub sets it
	s := &subscriber{subscriptions: subscriptions{topics: map[string]int{}},
		out: newOutbox(c, "PUB on "+c.LocalAddr().String()+": "+peerName(c), l.lines)}
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
			if len(topic) > maxTopic {
				l.lines.Printf("topic", "PUB on %s: %s subscribed to a topic of %d bytes, above the %d-byte limit: ignored",
					c.LocalAddr(), peerName(c), len(topic), maxTopic)
				continue
			}
			if !p.subscribe(s, topic) {
				l.lines.Printf("topics", "PUB on %s: %s has %d subscriptions or %d bytes of them already: one more ignored",
					c.LocalAddr(), peerName(c), maxTopics, maxTopicBytes)
				continue
			}
			a.prove()
		case 0:
			s.remove(string(topic))
		}
	}
}

// subscribe counts s's subscription to topic and, if it is new, queues its
// welcome. Send holds p.mu's read lock while it matches and queues, so
// with the write lock nothing published meanwhile can match the new topic
// before its welcome is queued: the welcome comes first, as from an XPUB.
// It reports false when the subscription is refused (see add).
func (p *Pub) subscribe(s *subscriber, topic []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	isNew, ok := s.add(string(topic))
	if isNew {
		p.greet(s, topic)
	}
	return ok
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

// Endpoint is where the Pub listens.
func (p *Pub) Endpoint() string { return p.l.endpoint() }

// Close unbinds the socket and closes its connections.
func (p *Pub) Close() error { return p.l.close() }
