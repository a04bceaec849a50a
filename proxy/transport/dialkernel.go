package transport

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// KernelChannels are the project's own client's sockets to one kernel.
// (The proxy dials its child through package zmtp instead: see
// proxy/kernel.go.)
type KernelChannels struct {
	Shell, Control, Stdin, IOPub zmq4.Socket
}

// dialRetry is how often a dial is retried while the kernel's ports are not
// up yet. zmq4 gives up after 10 retries by default (2.5 s), less than
// ipykernel can take to start, so dials retry until their context ends.
const dialRetry = 50 * time.Millisecond

// DialKernel connects to the kernel ci describes: a SUB on iopub,
// subscribed to everything, and DEALERs on shell, control and stdin that
// share identity, since ipykernel routes input() requests on stdin by the
// identity of the shell request that asked. The sockets live as long as
// ctx.
func DialKernel(ctx context.Context, ci kernelspec.ConnectionInfo, identity string) (*KernelChannels, error) {
	opts := []zmq4.Option{zmq4.WithDialerRetry(dialRetry), zmq4.WithDialerMaxRetries(-1)}
	k := &KernelChannels{}
	for _, ch := range []struct {
		name string
		port int
		sock *zmq4.Socket
		sub  bool
	}{{"iopub", ci.IOPubPort, &k.IOPub, true}, {"shell", ci.ShellPort, &k.Shell, false},
		{"control", ci.ControlPort, &k.Control, false}, {"stdin", ci.StdinPort, &k.Stdin, false}} {
		var s zmq4.Socket
		if ch.sub {
			s = zmq4.NewSub(ctx, opts...)
		} else {
			s = zmq4.NewDealer(ctx, append(opts, zmq4.WithID(zmq4.SocketIdentity(identity)))...)
		}
		*ch.sock = s
		ep, err := Endpoint(ci.Endpoint(ch.port))
		if err == nil {
			err = s.Dial(ep)
		}
		if err == nil && ch.sub {
			err = s.SetOption(zmq4.OptionSubscribe, "")
		}
		if err != nil {
			k.Close()
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			return nil, fmt.Errorf("connect to the kernel's %s port %d: %w", ch.name, ch.port, err)
		}
	}
	return k, nil
}

// Close closes the sockets dialled so far.
func (k *KernelChannels) Close() {
	for _, s := range []zmq4.Socket{k.Shell, k.Control, k.Stdin, k.IOPub} {
		if s != nil {
			_ = s.Close() // closing is all that is left to do with them
		}
	}
}
