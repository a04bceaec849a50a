// Package transport dials a kernel's message channels over the project's
// own ZMTP (package zmtp): the proxy towards its child kernel, and the
// project's client (package client, guardctl run) towards any kernel, so
// guardctl links one ZeroMQ implementation.
package transport

import (
	"context"
	"fmt"
	"time"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// Kernel is one client's sockets towards one kernel.
type Kernel struct {
	socks  [wire.NumChannels]*zmtp.Peer // HB stays nil: heartbeats are not messages
	cancel context.CancelFunc
}

// DialRetry is how often a dial is retried while the kernel's ports are
// not up yet; the dials go on until their context ends, since ipykernel
// can take seconds to start.
const DialRetry = 50 * time.Millisecond

// Dial connects to a kernel, started or starting: a SUB on iopub,
// subscribed to everything, and DEALERs on shell, control and stdin that
// share identity, since ipykernel routes input() requests on stdin by the
// identity of the shell request that asked. Each channel's messages go to
// handle, on that channel's own goroutine. The sockets live until Close or
// until ctx ends.
func Dial(ctx context.Context, ci kernelspec.ConnectionInfo, identity string, handle func(wire.Channel, [][]byte)) (*Kernel, error) {
	ctx, cancel := context.WithCancel(ctx)
	k := &Kernel{cancel: cancel}
	ports := ci.Ports()
	for _, ch := range []wire.Channel{wire.IOPub, wire.Shell, wire.Control, wire.Stdin} {
		ep := ci.Endpoint(ports[ch])
		h := func(frames [][]byte) { handle(ch, frames) }
		var err error
		if ch == wire.IOPub {
			k.socks[ch], err = zmtp.DialSub(ctx, ep, DialRetry, h)
		} else {
			k.socks[ch], err = zmtp.DialDealer(ctx, ep, []byte(identity), DialRetry, h)
		}
		if err != nil {
			k.Close()
			return nil, fmt.Errorf("connect to the kernel's %s port: %w", ch, err)
		}
	}
	return k, nil
}

// Send writes one message on ch.
func (k *Kernel) Send(ch wire.Channel, frames [][]byte) error { return k.socks[ch].Send(frames) }

// Done is closed when ch's connection has ended and its handler returned.
func (k *Kernel) Done(ch wire.Channel) <-chan struct{} { return k.socks[ch].Done() }

// Drain waits, at most d, for the kernel's side of every socket to end.
func (k *Kernel) Drain(d time.Duration) {
	deadline := time.After(d)
	for _, s := range k.socks {
		if s == nil {
			continue
		}
		select {
		case <-s.Done():
		case <-deadline:
			return
		}
	}
}

// Close closes the sockets and waits for their handlers to return.
func (k *Kernel) Close() {
	k.cancel()
	for _, s := range k.socks {
		if s != nil {
			s.Close()
		}
	}
}
