package zmtp

import (
	"context"
	"time"
)

// Peer is a dialled socket with its one connection: a DEALER or a SUB
// towards a kernel. Its messages go to the handler until the connection
// ends, which closes Done.
type Peer struct {
	c    *conn
	done chan struct{}
}

// DialDealer connects a DEALER with the given identity to the ROUTER at
// ep, retrying every retry until something listens there or ctx ends.
func DialDealer(ctx context.Context, ep string, identity []byte, retry time.Duration, handle Handler, opts ...Option) (*Peer, error) {
	return dialPeer(ctx, ep, typeDealer, identity, retry, handle, opts)
}

// DialSub connects a SUB to the PUB or XPUB at ep, as DialDealer does, and
// subscribes it to everything.
func DialSub(ctx context.Context, ep string, retry time.Duration, handle Handler, opts ...Option) (*Peer, error) {
	p, err := dialPeer(ctx, ep, typeSub, nil, retry, handle, opts)
	if err != nil {
		return nil, err
	}
	if err := p.c.writeMsg([][]byte{{1}}); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func dialPeer(ctx context.Context, ep, sockType string, identity []byte, retry time.Duration, handle Handler, opts []Option) (*Peer, error) {
	c, err := dial(ctx, ep, sockType, identity, retry, opts)
	if err != nil {
		return nil, err
	}
	p := &Peer{c: c, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			frames, err := c.readMsg()
			if err != nil {
				c.Close()
				return
			}
			handle(frames)
		}
	}()
	return p, nil
}

// Send writes one message to the peer.
func (p *Peer) Send(frames [][]byte) error { return p.c.writeMsg(frames) }

// Done is closed when the connection has ended and the handler returned.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Close ends the connection and waits for the handler to return.
func (p *Peer) Close() {
	p.c.Close()
	<-p.done
}
