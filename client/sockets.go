package client

import (
	"context"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// channelOf names each transport channel as the client's messages do.
var channelOf = [transport.NumChannels]Channel{transport.Shell: Shell, transport.Control: Control,
	transport.Stdin: Stdin, transport.IOPub: IOPub}

// transportOf is the reverse of channelOf.
var transportOf = map[Channel]transport.Channel{Shell: transport.Shell, Control: transport.Control,
	Stdin: transport.Stdin, IOPub: transport.IOPub}

// dialChannels connects to the kernel's shell, control, stdin and iopub
// ports; each message goes to handle on its channel's goroutine. The
// sockets live as long as ctx, or until Close.
func dialChannels(ctx context.Context, ci kernelspec.ConnectionInfo, identity string, handle func(Channel, [][]byte)) (*transport.Kernel, error) {
	return transport.Dial(ctx, ci, identity, func(c transport.Channel, frames [][]byte) { handle(channelOf[c], frames) })
}
