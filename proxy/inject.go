package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Publish sends the proxy's own message on iopub, as a child of parent (the
// raw header of the request it belongs to, or nil).
func (p *Proxy) Publish(parent []byte, msgType string, content any) error {
	m, err := p.Builder.Build([][]byte{[]byte("jupyter_guard." + msgType)}, msgType, parent, content)
	if err != nil {
		return err
	}
	return p.sendFront(wire.IOPub, m.Frames())
}

// Reply answers r on its channel, to the frontend that sent it.
func (p *Proxy) Reply(r *Request, content any) error {
	m, err := p.Builder.Build(r.Idents, r.ReplyType(), r.Header, content)
	if err != nil {
		return err
	}
	p.requests.reply(r.MsgID)
	if r.Cell != nil {
		r.Cell.ReplyLooked()
	}
	return p.sendFront(r.Channel, m.Frames())
}

// Unanswered is the request msgID if the kernel has not replied to it yet.
func (p *Proxy) Unanswered(msgID string) (*Request, bool) { return p.requests.unanswered(msgID) }

// CellWaiting reports whether a cell waits for the kernel's reply.
func (p *Proxy) CellWaiting() bool { return p.requests.cellWaiting() }

// Stream writes text into the output of the request whose header is parent,
// as the kernel's own print would.
func (p *Proxy) Stream(parent []byte, name, text string) error {
	return p.Publish(parent, "stream", map[string]string{"name": name, "text": text})
}

// nudge asks a starting kernel for kernel_info until it answers on shell
// and its iopub has delivered a message: only then are the proxy's
// subscription and the kernel's sockets known to be live.
func (p *Proxy) nudge(ctx context.Context, k *transport.Kernel, iopubSeen <-chan struct{}) error {
	answered := false
	var reply chan *wire.Message
	for {
		if !answered {
			m, err := p.Builder.Build(nil, "kernel_info_request", nil, map[string]any{})
			if err != nil {
				return err
			}
			reply = p.expect(m)
			if err := k.Send(wire.Shell, m.Frames()); err != nil {
				return fmt.Errorf("ask the kernel for kernel_info: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the kernel did not answer kernel_info: %w", ctx.Err())
		case m := <-reply:
			p.mu.Lock()
			p.kernelInfo = clone(m.Content)
			p.mu.Unlock()
			answered = true
		case <-time.After(500 * time.Millisecond):
		}
		if answered {
			select {
			case <-iopubSeen:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("no iopub message from the kernel: %w", ctx.Err())
			case <-time.After(500 * time.Millisecond):
				answered = false // ask again: its iopub output may have been lost
			}
		}
	}
}

// KernelInfo is the content of the current kernel's kernel_info_reply, or
// of the last kernel's while none is attached (nil before the first).
func (p *Proxy) KernelInfo() json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kernelInfo
}

// Request sends a request of the proxy's own to the attached kernel; its
// reply is not forwarded to any frontend.
func (p *Proxy) Request(ch wire.Channel, msgType string, content any) error {
	p.mu.Lock()
	k := p.kernel
	p.mu.Unlock()
	if k == nil {
		return fmt.Errorf("%s: no kernel is attached", msgType)
	}
	m, err := p.Builder.Build(nil, msgType, nil, content)
	if err != nil {
		return err
	}
	p.expect(m)
	return k.Send(ch, m.Frames())
}

// expect registers m, a request of the proxy's own, and returns where its
// reply will come: never to a frontend, and never to a later request's
// waiter. A reply nobody reads (a request the proxy only fires) is dropped.
func (p *Proxy) expect(m *wire.Message) chan *wire.Message {
	h, _ := wire.DecodeHeader(m.Header) // the proxy's own header
	r := &Request{Header: m.Header, MsgID: h.MsgID, MsgType: h.MsgType, Kind: h.Kind, own: make(chan *wire.Message, 1)}
	p.requests.add(r)
	return r.own
}
