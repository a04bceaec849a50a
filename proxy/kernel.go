package proxy

import (
	"context"
	"fmt"
	"time"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/zmtp"
)

// kernelSockets are the proxy's sockets towards one child kernel. A new
// child always gets new sockets.
type kernelSockets struct {
	socks  [numChannels]*zmtp.Peer // HB stays nil: the proxy answers heartbeats itself
	cancel context.CancelFunc
}

// dialRetry is how often a dial is retried while the kernel's ports are
// not up yet; the dials go on until their context ends, since ipykernel
// can take seconds to start.
const dialRetry = 50 * time.Millisecond

// dialKernel connects to a starting kernel: a SUB on iopub, subscribed to
// everything, and DEALERs on shell, control and stdin that share identity,
// since ipykernel routes input() requests on stdin by the identity of the
// shell request that asked. Each channel's messages go to handle.
func dialKernel(ctx context.Context, ci kernelspec.ConnectionInfo, identity string, handle func(Channel, [][]byte)) (*kernelSockets, error) {
	ctx, cancel := context.WithCancel(ctx)
	k := &kernelSockets{cancel: cancel}
	ports := channelPorts(ci)
	for _, ch := range []Channel{IOPub, Shell, Control, Stdin} {
		ep := ci.Endpoint(ports[ch])
		h := func(frames [][]byte) { handle(ch, frames) }
		var err error
		if ch == IOPub {
			k.socks[ch], err = zmtp.DialSub(ctx, ep, dialRetry, h)
		} else {
			k.socks[ch], err = zmtp.DialDealer(ctx, ep, []byte(identity), dialRetry, h)
		}
		if err != nil {
			k.close()
			return nil, fmt.Errorf("connect to the kernel's %s port: %w", ch, err)
		}
	}
	return k, nil
}

// drain waits, at most d, for the kernel's side of every socket to end.
func (k *kernelSockets) drain(d time.Duration) {
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

// close closes the sockets and waits for their handlers to return.
func (k *kernelSockets) close() {
	k.cancel()
	for _, s := range k.socks {
		if s != nil {
			s.Close()
		}
	}
}
