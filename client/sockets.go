package client

import (
	"context"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// channels are the client's sockets, one per channel.
type channels map[Channel]zmq4.Socket

// dialChannels connects to the kernel's shell, control, stdin and iopub
// ports. The sockets live as long as ctx.
func dialChannels(ctx context.Context, ci kernelspec.ConnectionInfo, identity string) (channels, error) {
	k, err := transport.DialKernel(ctx, ci, identity)
	if err != nil {
		return nil, err
	}
	return channels{Shell: k.Shell, Control: k.Control, Stdin: k.Stdin, IOPub: k.IOPub}, nil
}

func (socks channels) close() {
	for _, s := range socks {
		_ = s.Close() // closing is all that is left to do with them
	}
}
