package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// kernelSockets are the proxy's sockets towards one child kernel. A new
// child always gets new sockets: zmq4 does not reconnect reliably after its
// peer restarts.
type kernelSockets struct {
	socks  [numChannels]zmq4.Socket // HB stays nil: the proxy answers heartbeats itself
	cancel context.CancelFunc
	pumps  sync.WaitGroup
}

// dialKernel connects to a starting kernel, retrying until its ports are up
// or ctx ends (zmq4's default retries give up sooner than ipykernel starts).
// shell, control and stdin share one identity: ipykernel routes input()
// requests on stdin by the identity of the shell request that asked.
func dialKernel(ctx context.Context, ci kernelspec.ConnectionInfo, identity string) (*kernelSockets, error) {
	ctx, cancel := context.WithCancel(ctx)
	k := &kernelSockets{cancel: cancel}
	ports := [numChannels]int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort}
	opts := []zmq4.Option{zmq4.WithDialerRetry(50 * time.Millisecond), zmq4.WithDialerMaxRetries(-1)}
	for _, ch := range []Channel{IOPub, Shell, Control, Stdin} {
		var s zmq4.Socket
		if ch == IOPub {
			s = zmq4.NewSub(ctx, opts...)
		} else {
			s = zmq4.NewDealer(ctx, append(opts, zmq4.WithID(zmq4.SocketIdentity(identity)))...)
		}
		k.socks[ch] = s
		ep, err := transport.Endpoint(ci.Endpoint(ports[ch]))
		if err == nil {
			err = s.Dial(ep)
		}
		if err != nil {
			k.close()
			return nil, fmt.Errorf("connect to the kernel's %s port %d: %w", ch, ports[ch], err)
		}
		if ch == IOPub {
			if err := s.SetOption(zmq4.OptionSubscribe, ""); err != nil {
				k.close()
				return nil, fmt.Errorf("subscribe to the kernel's iopub: %w", err)
			}
		}
	}
	return k, nil
}

// drain waits, at most d, for the pumps to end on their own.
func (k *kernelSockets) drain(d time.Duration) {
	done := make(chan struct{})
	go func() { k.pumps.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// close ends the pumps reading from the kernel and waits for them.
func (k *kernelSockets) close() {
	k.cancel()
	closeAll(k.socks[:])
	k.pumps.Wait()
}
