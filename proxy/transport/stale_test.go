package transport

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/go-zeromq/zmq4"

	"github.com/jupyter-guard/jupyter-guard/internal/zmqpeer"
)

// TestIPCListenReplacesStaleSocket: a socket file left by a killed
// process does not stop a new ROUTER from listening and serving there,
// and a clean Close leaves no file behind.
func TestIPCListenReplacesStaleSocket(t *testing.T) {
	path := zmqpeer.SocketPath(t)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	ctx := context.Background()
	router := zmq4.NewRouter(ctx)
	dealer := zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("after-restart")))
	if err := router.Listen(SchemeIPC + "://" + path); err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	if err := dealer.Dial(SchemeIPC + "://" + path); err != nil {
		t.Fatal(err)
	}
	if err := dealer.Send(zmq4.NewMsg([]byte("hi"))); err != nil {
		t.Fatal(err)
	}
	msg, err := router.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(msg.Frames[0]); got != "after-restart" {
		t.Errorf("router got a message from %q", got)
	}
	dealer.Close()
	router.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket file left after Close: %v", err)
	}
}

// TestIPCListenLeavesLiveSocket: a path someone still listens on is not
// taken over.
func TestIPCListenLeavesLiveSocket(t *testing.T) {
	path := zmqpeer.SocketPath(t)
	live, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	router := zmq4.NewRouter(context.Background())
	defer router.Close()
	if err := router.Listen(SchemeIPC + "://" + path); err == nil {
		t.Fatal("listened on a socket another listener owns")
	}
	// The probe connection is queued on the live listener; accepting it
	// shows the listener still owns the path.
	c, err := live.Accept()
	if err != nil {
		t.Fatalf("live listener broken: %v", err)
	}
	c.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("live socket file removed: %v", err)
	}
}

// TestIPCListenLeavesOtherFiles: only socket files are ever removed.
func TestIPCListenLeavesOtherFiles(t *testing.T) {
	path := zmqpeer.SocketPath(t)
	if err := os.WriteFile(path, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	router := zmq4.NewRouter(context.Background())
	defer router.Close()
	if err := router.Listen(SchemeIPC + "://" + path); err == nil {
		t.Fatal("listened over a regular file")
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "not a socket" {
		t.Errorf("regular file touched: %q, %v", data, err)
	}
}
