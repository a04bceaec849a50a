package proxy

import (
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// socket is what the proxy does with a bound socket: send on it, close it.
type socket interface {
	Send(frames [][]byte) error
	Close() error
}

// frontSockets are the five sockets Jupyter connects to.
type frontSockets struct {
	socks [wire.NumChannels]socket // HB stays nil: the echo answers by itself
	hb    *zmtp.Echo
	iopub *zmtp.Pub
}

// listenFrontend binds them where the connection file says the kernel
// listens: a ROUTER for each request channel, whose messages go to handle,
// a PUB for iopub, greeting subscriptions with welcome, and for hb an echo (the proxy answers heartbeats
// itself, so a healthy proxy always looks alive, even while the kernel is
// paused or restarting). When the connection file has Curve keys, every
// one of them is the CURVE server Jupyter expects the kernel to be. handle
// says whether a request was verified: the five sockets share the bounds
// on what a peer may hold until it has sent one (zmtp.Limits).
func listenFrontend(ci kernelspec.ConnectionInfo, handle func(wire.Channel, [][]byte) bool, welcome zmtp.Welcome, log zmtp.Logger) (*frontSockets, error) {
	keys, err := ci.Curve()
	if err != nil {
		return nil, err
	}
	curve := zmtp.WithCurve(keys)
	limits := zmtp.WithLimits(zmtp.NewLimits(int(wire.NumChannels)))
	f := &frontSockets{}
	ports := ci.Ports()
	for ch := range wire.NumChannels {
		ep := ci.Endpoint(ports[ch])
		switch ch {
		case wire.IOPub:
			if f.iopub, err = zmtp.ListenPub(ep, welcome, log, curve, limits); err == nil {
				f.socks[ch] = f.iopub
			}
		case wire.HB:
			f.hb, err = zmtp.ListenEcho(ep, log, curve, limits)
		default:
			var router *zmtp.Router
			if router, err = zmtp.ListenRouter(ep, func(frames [][]byte) bool { return handle(ch, frames) }, log, curve, limits); err == nil {
				f.socks[ch] = router
			}
		}
		if err != nil {
			f.close()
			return nil, fmt.Errorf("listen for %s on %s: %w", ch, ep, err)
		}
	}
	return f, nil
}

func (f *frontSockets) close() {
	for _, s := range f.socks {
		if s != nil {
			_ = s.Close() // closing is all that is left to do with them
		}
	}
	if f.hb != nil {
		_ = f.hb.Close()
	}
}
