package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// ErrClosed is returned for requests made on or cut short by Close.
var ErrClosed = errors.New("client closed")

// Client is a connection to one kernel. Its methods may be called from
// several goroutines; each request gets its own replies.
type Client struct {
	// Session is the client's session id, also the identity of its shell,
	// control and stdin sockets.
	Session string

	builder *wire.Builder
	signer  *wire.Signer
	socks   *transport.Kernel
	stop    context.CancelFunc // ends the sockets
	watched sync.WaitGroup     // the goroutines that notice a lost connection

	mu      sync.Mutex
	waiters map[string]*waiter // by the msg_id of the request they wait on
	err     error              // why the client broke; set once, with broken closed
	broken  chan struct{}

	iopubSeen chan struct{} // closed at the first iopub message
	seenOnce  sync.Once
}

// waiter receives the messages whose parent is one request.
type waiter struct {
	msgs chan *Message
	gone chan struct{} // closed when the requester stops listening
}

// Dial connects to the kernel ci describes and returns once the kernel
// answers and its iopub messages arrive: like jupyter_server, it repeats
// kernel_info_request until both a reply and an iopub message have come,
// because a SUB socket misses what is published before its subscription
// reaches the kernel. ctx bounds the whole wait, including a kernel that
// is still starting.
func Dial(ctx context.Context, ci kernelspec.ConnectionInfo) (*Client, error) {
	if ci.SignatureScheme != "" && ci.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("signature scheme %q is not supported (only hmac-sha256)", ci.SignatureScheme)
	}
	signer := wire.NewSigner(ci.Key)
	session := uuid.NewString()
	sockCtx, stop := context.WithCancelCause(context.Background())
	// Until Dial returns, the caller's ctx ending ends the sockets, and
	// with them the dials' retries.
	unhook := context.AfterFunc(ctx, func() { stop(context.Cause(ctx)) })
	defer unhook()
	c := &Client{
		Session:   session,
		builder:   &wire.Builder{Signer: signer, Session: session},
		signer:    signer,
		stop:      func() { stop(ErrClosed) },
		waiters:   map[string]*waiter{},
		broken:    make(chan struct{}),
		iopubSeen: make(chan struct{}),
	}
	socks, err := transport.Dial(sockCtx, ci, session, c.read)
	if err != nil {
		stop(nil)
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return nil, err
	}
	c.socks = socks
	for _, ch := range []wire.Channel{wire.Shell, wire.Control, wire.Stdin, wire.IOPub} {
		c.watched.Add(1)
		go func() {
			defer c.watched.Done()
			select {
			case <-socks.Done(ch):
				c.fail(fmt.Errorf("%s channel: the connection to the kernel is lost", ch))
			case <-c.broken:
			}
		}()
	}
	if err := c.nudge(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close disconnects. Requests still waiting return ErrClosed.
func (c *Client) Close() {
	c.fail(ErrClosed)
	c.stop()
	c.socks.Close()
	c.watched.Wait()
}

// Err is why the client stopped working (a lost connection, a message
// with a bad signature, Close), or nil while it works.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail breaks the client with err unless it is already broken: every
// request, waiting or new, returns err.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.broken)
	}
}

// read takes each message from the kernel, on its channel's goroutine,
// and hands it to whoever waits on its parent.
func (c *Client) read(ch wire.Channel, frames [][]byte) {
	m, err := decode(ch, frames, c.signer)
	if err != nil {
		c.fail(err)
		return
	}
	if ch == wire.IOPub {
		c.seenOnce.Do(func() { close(c.iopubSeen) })
	}
	c.mu.Lock()
	w := c.waiters[m.Parent.MsgID]
	c.mu.Unlock()
	if w == nil {
		return // for another client, or a request no longer waited on
	}
	select {
	case w.msgs <- m:
	case <-w.gone:
	case <-c.broken:
	}
}

// build signs a new message of msgType; parent is the raw header it
// answers (nil for none). It returns the message and its msg_id.
func (c *Client) build(msgType string, parent []byte, content any) (*wire.Message, string, error) {
	m, err := c.builder.Build(nil, msgType, parent, content)
	if err != nil {
		return nil, "", err
	}
	h, err := wire.DecodeHeader(m.Header)
	if err != nil {
		return nil, "", err
	}
	return m, h.MsgID, nil
}

// transmit sends a built message on ch.
func (c *Client) transmit(ch wire.Channel, m *wire.Message, msgType string) error {
	if err := c.socks.Send(ch, m.Frames()); err != nil {
		return fmt.Errorf("%s channel: send %s: %w", ch, msgType, err)
	}
	return nil
}

// send sends a message that expects no answer.
func (c *Client) send(ch wire.Channel, msgType string, parent []byte, content any) error {
	m, _, err := c.build(msgType, parent, content)
	if err != nil {
		return err
	}
	return c.transmit(ch, m, msgType)
}

// request sends a request and returns the waiter for what answers it.
// The caller must call forget when done.
func (c *Client) request(ch wire.Channel, msgType string, content any) (*waiter, string, error) {
	if err := c.Err(); err != nil {
		return nil, "", err
	}
	m, id, err := c.build(msgType, nil, content)
	if err != nil {
		return nil, "", err
	}
	// Registered before sending, so not even the first answer is missed.
	w := &waiter{msgs: make(chan *Message, 64), gone: make(chan struct{})}
	c.mu.Lock()
	c.waiters[id] = w
	c.mu.Unlock()
	if err := c.transmit(ch, m, msgType); err != nil {
		c.forget(id, w)
		return nil, "", err
	}
	return w, id, nil
}

// forget stops routing answers of request id to w.
func (c *Client) forget(id string, w *waiter) {
	c.mu.Lock()
	delete(c.waiters, id)
	c.mu.Unlock()
	close(w.gone)
}

// next returns the next answer w receives.
func (c *Client) next(ctx context.Context, w *waiter) (*Message, error) {
	select {
	case m := <-w.msgs: // what has arrived is delivered even if the client broke since
		return m, nil
	default:
	}
	select {
	case m := <-w.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-c.broken:
		return nil, c.Err()
	}
}

// reply waits for the reply of type replyType on w, skipping the status
// and other iopub messages the request causes.
func (c *Client) reply(ctx context.Context, w *waiter, replyType string) (*Message, error) {
	for {
		m, err := c.next(ctx, w)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", replyType, err)
		}
		if m.Channel != wire.IOPub && m.Header.MsgType == replyType {
			return m, nil
		}
	}
}
