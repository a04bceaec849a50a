package transport

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-zeromq/zmq4"
)

// endpoints returns where to listen for scheme and, once listening, where
// to dial. Unix socket paths are kept short (sun_path is 108 bytes).
func endpoints(tb testing.TB, scheme string) (listen string, dial func(zmq4.Socket) string) {
	tb.Helper()
	if err := Register(); err != nil {
		tb.Fatal(err)
	}
	switch scheme {
	case "ipc", SchemeIPC:
		dir, err := os.MkdirTemp("", "zt")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(dir) })
		ep := scheme + "://" + filepath.Join(dir, "s")
		return ep, func(zmq4.Socket) string { return ep }
	default:
		return scheme + "://127.0.0.1:0", func(s zmq4.Socket) string {
			return scheme + "://" + s.Addr().String()
		}
	}
}

// connect makes server listen and client dial on scheme, closing both at
// the end of the test. Dial returns once the ZMTP handshake is done.
func connect(tb testing.TB, scheme string, server, client zmq4.Socket) {
	tb.Helper()
	tb.Cleanup(func() {
		client.Close()
		server.Close()
	})
	listen, dial := endpoints(tb, scheme)
	if err := server.Listen(listen); err != nil {
		tb.Fatalf("listen %s: %v", listen, err)
	}
	if err := client.Dial(dial(server)); err != nil {
		tb.Fatalf("dial %s: %v", dial(server), err)
	}
}

// routerDealer returns a ROUTER listening and a DEALER with identity id
// dialled to it.
func routerDealer(tb testing.TB, scheme, id string) (router, dealer zmq4.Socket) {
	tb.Helper()
	ctx := context.Background()
	router = zmq4.NewRouter(ctx, zmq4.WithID(zmq4.SocketIdentity("router")))
	dealer = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity(id)))
	connect(tb, scheme, router, dealer)
	return router, dealer
}

// jupyterMsg is an execute_request as Jupyter's client DEALER sends it,
// without the routing identity the kernel's ROUTER adds.
func jupyterMsg() zmq4.Msg {
	header := `{"msg_id":"4f8c2a1e-0b9d-4c55-9d0e-7a1b2c3d4e5f_12345_1","msg_type":"execute_request",` +
		`"username":"jovyan","session":"4f8c2a1e-0b9d-4c55-9d0e-7a1b2c3d4e5f","date":"2026-11-21T23:41:16.123456Z",` +
		`"version":"5.3","subshell_id":null}`
	content := `{"code":"pass","silent":false,"store_history":true,"user_expressions":{},"allow_stdin":true,"stop_on_error":true}`
	return zmq4.NewMsgFrom(
		[]byte("<IDS|MSG>"),
		[]byte("9c2d6b1f0e7a48a3b5c4d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1"),
		[]byte(header),
		[]byte("{}"),
		[]byte("{}"),
		[]byte(content),
	)
}
