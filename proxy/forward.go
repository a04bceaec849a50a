package proxy

import (
	"encoding/json"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// fromFrontend forwards requests on one channel from the frontends to the
// kernel. A message that is not a well-formed, correctly signed request for
// this channel is dropped with one log line: it must never reach the kernel
// or stop the proxy.
func (p *Proxy) fromFrontend(ch Channel) {
	defer p.frontend.Done()
	for {
		msg, err := p.front[ch].Recv()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.log.Printf("%s: receive from the frontend: %v", ch, err)
			continue
		}
		if msg.Type == zmq4.CmdMsg {
			continue // a ZMTP heartbeat PING surfaced by zmq4: not a message
		}
		m, err := wire.Parse(msg.Frames)
		if err != nil {
			p.log.Printf("dropped a message on %s from the frontend: %v", ch, err)
			continue
		}
		if err := p.signer.Verify(m); err != nil {
			p.log.Printf("dropped a message on %s from the frontend: %v", ch, err)
			continue
		}
		h, err := wire.DecodeHeader(m.Header)
		if err != nil || !json.Valid(m.Parent) || !json.Valid(m.Metadata) || !json.Valid(m.Content) {
			p.log.Printf("dropped a message on %s from the frontend: a JSON frame does not parse", ch)
			continue
		}
		if !ch.accepts(h.MsgType) {
			p.log.Printf("dropped a message on %s from the frontend: %q does not belong on %s", ch, h.MsgType, ch)
			continue
		}
		if !p.hooks.FromFrontend(ch, m, h) {
			continue
		}
		p.inflight.add(ch, m, h)
		k, err := p.current()
		if err != nil {
			return
		}
		// The DEALER sends the frontend's identity frames along; the
		// kernel's ROUTER adds ours in front and strips it on the way back.
		if err := k.socks[ch].Send(zmq4.NewMsgFrom(msg.Frames...)); err != nil {
			p.log.Printf("%s: forward %s to the kernel: %v", ch, h.MsgType, err)
		}
		p.release.forwarded(frameBytes(msg.Frames))
	}
}

// fromKernel forwards one channel from the kernel to the frontends until
// the kernel's sockets close. The first iopub message closes iopubSeen.
func (p *Proxy) fromKernel(k *kernelSockets, ch Channel, iopubSeen chan struct{}) {
	defer k.pumps.Done()
	for {
		msg, err := k.socks[ch].Recv()
		if err != nil {
			return // detached, or the kernel went away
		}
		if msg.Type == zmq4.CmdMsg {
			continue
		}
		if ch == IOPub && iopubSeen != nil {
			close(iopubSeen)
			iopubSeen = nil
		}
		m, err := wire.Parse(msg.Frames)
		if err != nil {
			// Not ours to judge: pass it on as the kernel sent it.
			p.log.Printf("%s: a message from the kernel is not a Jupyter message (%v); forwarded as is", ch, err)
			_ = p.sendFront(ch, msg.Frames)
			continue
		}
		h, _ := wire.DecodeHeader(m.Header)
		parent, _ := wire.DecodeHeader(m.Parent)
		state := ""
		switch ch {
		case Shell, Control:
			p.inflight.answered(parent.MsgID)
		case IOPub:
			if h.MsgType == "status" {
				var ok bool
				if state, ok = wire.ExecutionState(m.Content); ok {
					p.inflight.status(parent.MsgID, m.Parent, state)
				}
				if state == "starting" {
					// To the frontends the proxy is the kernel, and it says
					// itself when it (re)starts and when it is ready; a
					// child's own late "starting" would leave JupyterLab
					// showing Starting after the proxy said idle.
					continue
				}
			}
		}
		p.hooks.FromKernel(ch, m, h, parent, state)
		if ch != IOPub && len(m.Idents) == 0 {
			// No frontend identity: the answer to one of the proxy's own requests.
			select {
			case p.own <- m:
			default:
			}
			continue
		}
		if err := p.sendFront(ch, msg.Frames); err != nil {
			p.log.Print(err)
		}
		p.release.forwarded(frameBytes(msg.Frames))
	}
}

// heartbeat echoes every ping itself, so a healthy proxy always looks alive
// (even while the kernel is paused or restarting); the proxy watches the
// kernel process directly.
func (p *Proxy) heartbeat() {
	defer p.frontend.Done()
	for {
		msg, err := p.front[HB].Recv()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			continue
		}
		_ = p.front[HB].Send(msg)
	}
}
