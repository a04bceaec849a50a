package proxy

import (
	"context"
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

// dialKernel connects to a starting kernel (see transport.DialKernel).
func dialKernel(ctx context.Context, ci kernelspec.ConnectionInfo, identity string) (*kernelSockets, error) {
	ctx, cancel := context.WithCancel(ctx)
	kc, err := transport.DialKernel(ctx, ci, identity)
	if err != nil {
		cancel()
		return nil, err
	}
	k := &kernelSockets{cancel: cancel}
	k.socks[Shell], k.socks[Control], k.socks[Stdin], k.socks[IOPub] = kc.Shell, kc.Control, kc.Stdin, kc.IOPub
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
