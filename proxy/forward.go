package proxy

import (
	"encoding/json"
	"errors"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// fromFrontend forwards a request on ch from a frontend to the kernel, on
// the goroutine that read it, and reports whether it was signed with the
// key (its connection is then trusted: see zmtp.Limits). A message that is
// not a well-formed, correctly signed request for this channel is dropped
// with one log line: it must never reach the kernel or stop the proxy.
func (p *Proxy) fromFrontend(ch wire.Channel, frames [][]byte) (verified bool) {
	<-p.ready
	m, err := wire.Parse(frames)
	if err != nil {
		p.drops.Printf(ch.String()+" "+kind(err), "dropped a message on %s from the frontend: %v", ch, err)
		return false
	}
	if err := p.signer.Verify(m); err != nil {
		p.drops.Printf(ch.String()+" signature", "dropped a message on %s from the frontend: %v", ch, err)
		return false
	}
	h, err := wire.DecodeHeader(m.Header)
	if err != nil || !json.Valid(m.Parent) || !json.Valid(m.Metadata) || !json.Valid(m.Content) {
		p.drops.Printf(ch.String()+" json", "dropped a message on %s from the frontend: a JSON frame does not parse", ch)
		return true
	}
	if !h.Kind.Accepted(ch) {
		p.drops.Printf(ch.String()+" type", "dropped a message on %s from the frontend: %q does not belong on %s", ch, h.MsgType, ch)
		return true
	}
	r := newRequest(ch, m, h)
	if !p.hooks.FromFrontend(r, m) {
		return true
	}
	registered := p.requests.add(r)
	k, err := p.current()
	if errors.Is(err, errNoKernel) {
		if registered {
			p.requests.end(r)
			p.hooks.Unserved(r)
		}
		return true
	}
	if err != nil {
		return true
	}
	// The DEALER sends the frontend's identity frames along; the kernel's
	// ROUTER adds ours in front and strips it on the way back.
	if err := k.Send(ch, frames); err != nil {
		p.drops.Printf(ch.String()+" forward", "%s: forward %s to the kernel: %v", ch, h.MsgType, err)
	}
	p.release.forwarded(frameBytes(frames))
	return true
}

// fromKernel forwards a message on ch from the kernel to the frontends, on
// the goroutine that read it.
func (p *Proxy) fromKernel(ch wire.Channel, frames [][]byte) {
	m, err := wire.Parse(frames)
	if err != nil {
		// Not ours to judge: pass it on as the kernel sent it.
		p.log.Printf("%s: a message from the kernel is not a Jupyter message (%v); forwarded as is", ch, err)
		if ch == wire.IOPub {
			p.iopubOut.forward(frames, nil)
		} else {
			_ = p.sendFront(ch, frames)
		}
		return
	}
	h, _ := wire.DecodeHeader(m.Header)
	parent, _ := wire.DecodeHeader(m.Parent)
	state := ""
	var asked *Request
	first := false
	switch ch {
	case wire.Shell, wire.Control:
		if asked, first = p.requests.reply(parent.MsgID); asked != nil && asked.own != nil {
			if first {
				asked.own <- m // room for one; never to a frontend
			}
			return
		}
	case wire.IOPub:
		switch {
		case h.Kind == wire.IOPubWelcome:
			p.kernelWelcomes() // the kernel's greeting of the proxy's own subscription
			return
		case h.Kind == wire.Status:
			var ok bool
			if state, ok = wire.ExecutionState(m.Content); ok {
				asked = p.requests.status(parent, m.Parent, state)
			}
			if state == "starting" {
				// To the frontends the proxy is the kernel, and it says
				// itself when it (re)starts and when it is ready; a
				// child's own late "starting" would leave JupyterLab
				// showing Starting after the proxy said idle.
				return
			}
		case parent.Kind == wire.ExecuteRequest:
			asked = p.requests.get(parent.MsgID)
		}
	}
	wait := p.hooks.FromKernel(ch, m, h, asked, state)
	if ch == wire.IOPub {
		p.iopubOut.forward(frames, wait)
		p.release.forwarded(frameBytes(frames))
		return
	}
	if asked != nil && asked.Cell != nil {
		asked.Cell.ReplyLooked()
	}
	if ch == wire.Shell || ch == wire.Control {
		// Replies go by the request they answer, not by the identities a
		// kernel may or may not echo (Deno's does not).
		if len(m.Idents) == 0 {
			if !first {
				p.drops.Printf(ch.String()+" unasked", "%s: a %s from the kernel answers no request the proxy knows of; dropped", ch, h.MsgType)
				return
			}
			frames = append(cloneFrames(asked.Idents), frames...)
		}
	}
	if err := p.sendFront(ch, frames); err != nil {
		p.log.Print(err)
	}
	p.release.forwarded(frameBytes(frames))
}

// kind is what sort of error err is, without the figures it may carry: the
// sentinel it wraps, if any. A peer's bytes must not make new kinds.
func kind(err error) string {
	if inner := errors.Unwrap(err); inner != nil {
		return inner.Error()
	}
	return err.Error()
}
