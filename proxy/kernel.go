package proxy

import (
	"context"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// toKernel is each of the proxy's channels as the transport numbers it;
// HB has none: the proxy answers heartbeats itself.
var toKernel = [...]transport.Channel{Shell: transport.Shell, Control: transport.Control,
	Stdin: transport.Stdin, IOPub: transport.IOPub}

// fromKernel is the reverse of toKernel.
var fromKernel = [transport.NumChannels]Channel{transport.Shell: Shell, transport.Control: Control,
	transport.Stdin: Stdin, transport.IOPub: IOPub}

// dialKernel connects to a starting child kernel (transport.Dial); each
// channel's messages go to handle. A new child always gets new sockets.
func dialKernel(ctx context.Context, ci kernelspec.ConnectionInfo, identity string, handle func(Channel, [][]byte)) (*transport.Kernel, error) {
	return transport.Dial(ctx, ci, identity, func(c transport.Channel, frames [][]byte) { handle(fromKernel[c], frames) })
}
