package proxy

import (
	"context"
	"fmt"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/transport"
)

// listenFrontend binds the five sockets Jupyter connects to, where its
// connection file says the kernel listens.
func listenFrontend(ctx context.Context, ci kernelspec.ConnectionInfo) ([numChannels]zmq4.Socket, error) {
	var socks [numChannels]zmq4.Socket
	ports := [numChannels]int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort, ci.HBPort}
	for ch := range numChannels {
		var s zmq4.Socket
		switch ch {
		case IOPub:
			s = zmq4.NewPub(ctx)
		default:
			// A ROUTER for hb too: it echoes to each REQ peer by identity,
			// where a REP would serve one peer at a time.
			s = zmq4.NewRouter(ctx)
		}
		ep, err := transport.Endpoint(ci.Endpoint(ports[ch]))
		if err == nil {
			err = s.Listen(ep)
		}
		if err != nil {
			closeAll(socks[:])
			s.Close()
			return socks, fmt.Errorf("listen for %s on %s: %w", ch, ci.Endpoint(ports[ch]), err)
		}
		socks[ch] = s
	}
	return socks, nil
}

func closeAll(socks []zmq4.Socket) {
	for _, s := range socks {
		if s != nil {
			s.Close()
		}
	}
}
