package client

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// dialRetry is how often a dial is retried while the kernel's ports are not
// up yet. zmq4 gives up after 10 retries by default (2.5 s), less than
// ipykernel can take to start, so dials retry until their context ends.
const dialRetry = 50 * time.Millisecond

// channels are the client's sockets, one per channel.
type channels map[Channel]zmq4.Socket

// dialChannels connects to the kernel's shell, control, stdin and iopub
// ports. The sockets live as long as ctx.
func dialChannels(ctx context.Context, ci kernelspec.ConnectionInfo, identity string) (channels, error) {
	ports := map[Channel]int{Shell: ci.ShellPort, Control: ci.ControlPort, Stdin: ci.StdinPort, IOPub: ci.IOPubPort}
	opts := []zmq4.Option{zmq4.WithDialerRetry(dialRetry), zmq4.WithDialerMaxRetries(-1)}
	socks := channels{}
	for _, ch := range []Channel{IOPub, Shell, Control, Stdin} {
		var s zmq4.Socket
		if ch == IOPub {
			s = zmq4.NewSub(ctx, opts...)
		} else {
			s = zmq4.NewDealer(ctx, append(opts, zmq4.WithID(zmq4.SocketIdentity(identity)))...)
		}
		socks[ch] = s
		ep, err := transport.Endpoint(ci.Endpoint(ports[ch]))
		if err == nil {
			err = s.Dial(ep)
		}
		if err == nil && ch == IOPub {
			err = s.SetOption(zmq4.OptionSubscribe, "")
		}
		if err != nil {
			socks.close()
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			return nil, fmt.Errorf("connect to the kernel's %s port %d: %w", ch, ports[ch], err)
		}
	}
	return socks, nil
}

func (socks channels) close() {
	for _, s := range socks {
		_ = s.Close() // closing is all that is left to do with them
	}
}
