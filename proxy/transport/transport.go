package transport

import (
	"context"
	"fmt"
	"net"

	zmqtransport "github.com/go-zeromq/zmq4/transport"

	"github.com/jupyter-guard/jupyter-guard/proxy/zmtp"
)

// bufferedTransport is zmq4's own net transport with every connection,
// dialled or accepted, wrapped in a conn.
type bufferedTransport struct {
	network string // "tcp" or "unix"
	base    zmqtransport.Transport
}

func newBufferedTransport(network string) bufferedTransport {
	return bufferedTransport{network: network, base: zmqtransport.New(network)}
}

var _ zmqtransport.Transport = bufferedTransport{}

func (t bufferedTransport) Dial(ctx context.Context, d zmqtransport.Dialer, addr string) (net.Conn, error) {
	c, err := t.base.Dial(ctx, d, addr)
	if err != nil {
		return nil, err
	}
	return newConn(c), nil
}

func (t bufferedTransport) Listen(ctx context.Context, addr string) (net.Listener, error) {
	if t.network == "unix" {
		if err := zmtp.RemoveStaleSocket(addr); err != nil {
			return nil, err
		}
	}
	l, err := t.base.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	return listener{l}, nil
}

// Addr resolves endpoints like zmq4's tcp and ipc do ("*" host or port).
func (t bufferedTransport) Addr(ep string) (string, error) {
	addr, err := t.base.Addr(ep)
	if err != nil {
		return "", fmt.Errorf("buffered transport: address %q: %w", ep, err)
	}
	return addr, nil
}

type listener struct {
	net.Listener
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newConn(c), nil
}
