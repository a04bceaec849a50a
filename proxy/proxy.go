package proxy

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/jupyter-guard/jupyter-guard/internal/ratelog"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Hooks let the code that owns the proxy watch and steer the traffic. They
// run on the goroutine that read the message: they must be quick and must
// not block.
type Hooks interface {
	// FromFrontend sees each verified request, as its record r, before the
	// kernel does; it may fill in r.Cell.Code. Returning false keeps it from
	// the kernel (the hook answers it).
	FromFrontend(r *Request, m *wire.Message) bool
	// FromKernel sees each message from the kernel before the frontends do.
	// asked is the record of the request it answers or belongs to: for a
	// reply and a status always, for other iopub messages if they belong to
	// an execute request; nil if it is not in flight. state is a status
	// message's execution_state, decoded once for both ("" otherwise).
	// For an iopub message it may return what the message must wait for
	// (what the guard posts into a cell before its idle): the message and
	// the iopub messages after it are then held until that is closed, at
	// most maxHold, while the kernel's messages are still read (held.go).
	// Nil, and whatever it returns for another channel: forward at once.
	FromKernel(ch wire.Channel, m *wire.Message, h wire.Header, asked *Request, state string) (wait <-chan struct{})
	// Unserved gets a request that was waiting for a kernel when GiveUp
	// said none is coming, or came after it: the hook answers it.
	Unserved(r *Request)
}

// errNoKernel: GiveUp said no kernel is coming.
var errNoKernel = errors.New("no kernel is coming")

// Proxy forwards between the frontends and the current child kernel.
type Proxy struct {
	Builder *wire.Builder

	ctx    context.Context
	cancel context.CancelFunc
	hooks  Hooks
	log    *log.Logger
	signer *wire.Signer
	// drops logs the frontend messages that are refused, rate-limited: a
	// peer (no key is needed to connect) must not fill the disk.
	drops *ratelog.Limiter

	front    *frontSockets
	ready    chan struct{} // closed once front is set: handlers wait for it
	requests *registry
	iopubOut *heldOutput // the kernel's iopub, in order, held where a hook says
	release  releaser
	// welcomes: the kernel greets iopub subscriptions (welcome.go).
	welcomes atomic.Bool

	mu       sync.Mutex
	kernel   *transport.Kernel // nil while no kernel is attached
	attached chan struct{}     // closed while a kernel is attached, or after GiveUp
	noKernel bool              // GiveUp: none is coming
	// kernelInfo is the content of the kernel's answer to the nudge.
	kernelInfo []byte
}

// dropReport is how often each kind of refused message is logged, at most.
const dropReport = 10 * time.Second

// Listen binds the frontend sockets and starts forwarding from them.
// Requests wait until a kernel is attached.
func Listen(ci kernelspec.ConnectionInfo, hooks Hooks, logger *log.Logger) (*Proxy, error) {
	ctx, cancel := context.WithCancel(context.Background())
	signer := wire.NewSigner(ci.Key)
	p := &Proxy{
		Builder:  wire.NewBuilder(signer),
		ctx:      ctx,
		cancel:   cancel,
		hooks:    hooks,
		log:      logger,
		signer:   signer,
		drops:    ratelog.New(logger.Printf, dropReport),
		ready:    make(chan struct{}),
		requests: newRegistry(),
		attached: make(chan struct{}),
	}
	p.iopubOut = newHeldOutput(func(frames [][]byte) {
		if err := p.sendFront(wire.IOPub, frames); err != nil {
			p.log.Print(err)
		}
	})
	front, err := listenFrontend(ci, p.fromFrontend, p.welcome, logger.Printf)
	if err != nil {
		cancel()
		return nil, err
	}
	p.front = front
	close(p.ready)
	return p, nil
}

// Close stops forwarding and closes every socket.
func (p *Proxy) Close() {
	p.Detach(0)
	p.cancel()
	p.front.close()
}

// Attach connects to a child kernel described by ci and starts forwarding
// to and from it. It returns once the kernel answers on shell and its
// iopub messages flow, so no frontend request or output is lost to a slow
// start; it gives up when ctx ends. ready runs once the kernel has
// answered and before any waiting request is let through to it, so what
// it measures is the started kernel, not yet the first cell.
func (p *Proxy) Attach(ctx context.Context, ci kernelspec.ConnectionInfo, ready func()) error {
	iopubSeen := make(chan struct{})
	var seen sync.Once
	k, err := transport.Dial(ctx, ci, uuid.NewString(), func(ch wire.Channel, frames [][]byte) {
		if ch == wire.IOPub {
			seen.Do(func() { close(iopubSeen) })
		}
		p.fromKernel(ch, frames)
	})
	if err != nil {
		return err
	}
	if err := p.nudge(ctx, k, iopubSeen); err != nil {
		k.Close()
		return err
	}
	ready()
	p.mu.Lock()
	p.kernel = k
	if p.noKernel { // GiveUp closed it already
		p.noKernel = false
	} else {
		close(p.attached)
	}
	p.mu.Unlock()
	return nil
}

// Detach disconnects from the current kernel and returns the requests it
// left unanswered and those it left busy, in arrival order, for the caller
// to close.
// After a kernel exits, its sockets reach end of file once everything it
// sent has been read: drain is how long to wait for that, so its last
// replies and output still reach the frontends.
func (p *Proxy) Detach(drain time.Duration) (pending, busy []*Request) {
	p.mu.Lock()
	k := p.kernel
	if k != nil {
		p.kernel = nil
		p.attached = make(chan struct{})
	}
	p.mu.Unlock()
	if k != nil {
		k.Drain(drain)
		k.Close()
	}
	p.iopubOut.rush() // what the kernel published goes before what is said of its end
	return p.requests.drain()
}

// GiveUp tells requests waiting for a kernel, and those that come until
// the next Attach, that none is coming: each goes to Hooks.Unserved
// instead of waiting for ever on its frontend socket's reading goroutine.
func (p *Proxy) GiveUp() {
	p.mu.Lock()
	if p.kernel == nil && !p.noKernel {
		p.noKernel = true
		close(p.attached) // wakes the waiters; Attach makes a new one
	}
	p.mu.Unlock()
}

// Hold undoes GiveUp: requests wait for the next kernel again.
func (p *Proxy) Hold() {
	p.mu.Lock()
	if p.noKernel {
		p.noKernel = false
		p.attached = make(chan struct{})
	}
	p.mu.Unlock()
}

// current returns the attached kernel's sockets, waiting for one if needed.
func (p *Proxy) current() (*transport.Kernel, error) {
	for {
		p.mu.Lock()
		k, attached, none := p.kernel, p.attached, p.noKernel
		p.mu.Unlock()
		if k != nil {
			return k, nil
		}
		if none {
			return nil, errNoKernel
		}
		select {
		case <-attached:
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
	}
}

func (p *Proxy) sendFront(ch wire.Channel, frames [][]byte) error {
	if err := p.front.socks[ch].Send(frames); err != nil {
		return fmt.Errorf("send on %s to the frontend: %w", ch, err)
	}
	return nil
}
