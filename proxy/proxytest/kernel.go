package proxytest

import (
	"crypto/sha256"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// Kernel is a fake Jupyter kernel: the child the proxy dials. It checks
// each message's signature (the first verified one trusts its connection
// with memory, as the proxy's own sockets do) and answers as ipykernel
// does: a busy status on iopub, the reply, an idle status. An
// execute_request's code "print TEXT" prints TEXT on stdout; "lines N"
// prints "line 1" to "line N", a stream message each; "hang" stays busy
// and never replies, as a kernel stuck in a cell; every other code does
// nothing and succeeds.
type Kernel struct {
	// Conn is the kernel's connection file: where it listens, its key.
	Conn kernelspec.ConnectionInfo
	// NoIdents makes the kernel send its replies without the identity
	// frames that came with the request (but the one its ROUTER routes
	// by), as Deno's does.
	NoIdents atomic.Bool

	signer  *wire.Signer
	builder *wire.Builder
	routers map[string]*zmtp.Router
	iopub   *zmtp.Pub
	hb      *zmtp.Echo
	count   atomic.Int64 // execution count
	// up is closed once every socket is set: a connection's goroutine
	// starts before the sockets after its own are, and nothing else
	// orders what it reads of k after what startKernel wrote.
	up chan struct{}
	// Comms gets each comm_msg the kernel receives.
	Comms chan Comm
}

// Comm is a comm_msg as the kernel received it: its content, and its
// buffers' sizes and SHA-256 digests (a test's 300 MiB buffer is not
// kept twice).
type Comm struct {
	Content json.RawMessage
	Sizes   []int
	Digests [][sha256.Size]byte
}

// StartKernel starts a fake kernel on loopback tcp ports, with a key of
// its own, closed at the end of the test.
func StartKernel(t testing.TB) *Kernel {
	t.Helper()
	return startKernel(t, uuid.NewString())
}

// Restarted starts another fake kernel with k's key, as a kernel restarted
// from the same connection file is.
func (k *Kernel) Restarted(t testing.TB) *Kernel {
	t.Helper()
	return startKernel(t, k.Conn.Key)
}

func startKernel(t testing.TB, key string) *Kernel {
	signer := wire.NewSigner(key)
	k := &Kernel{signer: signer, builder: wire.NewBuilder(signer), routers: map[string]*zmtp.Router{},
		Comms: make(chan Comm, 16), up: make(chan struct{})}
	k.Conn = kernelspec.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: key, SignatureScheme: "hmac-sha256", KernelName: "proxytest"}
	defer close(k.up) // on t.Fatal too, so no handler waits for good
	const ep = "tcp://127.0.0.1:0"
	for _, name := range []string{"shell", "control", "stdin"} {
		r, err := zmtp.ListenRouter(ep, func(frames [][]byte) bool { return k.handle(name, frames) }, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		k.routers[name] = r
	}
	var err error
	if k.iopub, err = zmtp.ListenPub(ep, nil, t.Logf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.iopub.Close() })
	if k.hb, err = zmtp.ListenEcho(ep, t.Logf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.hb.Close() })
	k.Conn.ShellPort = port(t, k.routers["shell"].Endpoint())
	k.Conn.ControlPort = port(t, k.routers["control"].Endpoint())
	k.Conn.StdinPort = port(t, k.routers["stdin"].Endpoint())
	k.Conn.IOPubPort = port(t, k.iopub.Endpoint())
	k.Conn.HBPort = port(t, k.hb.Endpoint())
	return k
}

func port(t testing.TB, ep string) int {
	_, p, err := net.SplitHostPort(strings.TrimPrefix(ep, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// handle answers one message on the named channel, and says whether it
// was signed with the key.
func (k *Kernel) handle(channel string, frames [][]byte) bool {
	<-k.up
	m, err := wire.Parse(frames)
	if err != nil || k.signer.Verify(m) != nil {
		return false
	}
	h, err := wire.DecodeHeader(m.Header)
	if err != nil {
		return true
	}
	k.publish(m.Header, "status", map[string]string{"execution_state": "busy"})
	idle := true
	defer func() {
		if idle {
			k.publish(m.Header, "status", map[string]string{"execution_state": "idle"})
		}
	}()
	switch {
	case h.Kind == wire.KernelInfoRequest:
		k.reply(channel, m, "kernel_info_reply", map[string]any{"status": "ok", "protocol_version": wire.Protocol,
			"implementation": "proxytest", "implementation_version": "1", "banner": "a fake kernel",
			"language_info": map[string]string{"name": "fake", "version": "1", "mimetype": "text/plain", "file_extension": ".txt"}})
	case h.Kind == wire.ExecuteRequest:
		var c struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(m.Content, &c)
		n := k.count.Add(1)
		k.publish(m.Header, "execute_input", map[string]any{"code": c.Code, "execution_count": n})
		if c.Code == "hang" {
			idle = false
			return true
		}
		if text, ok := strings.CutPrefix(c.Code, "print "); ok {
			k.publish(m.Header, "stream", map[string]string{"name": "stdout", "text": text + "\n"})
		}
		if count, ok := strings.CutPrefix(c.Code, "lines "); ok {
			lines, _ := strconv.Atoi(count)
			for i := 1; i <= lines; i++ {
				k.publish(m.Header, "stream", map[string]string{"name": "stdout", "text": "line " + strconv.Itoa(i) + "\n"})
			}
		}
		k.reply(channel, m, "execute_reply", map[string]any{"status": "ok", "execution_count": n, "user_expressions": map[string]any{}})
	case h.Kind == wire.CommMsg:
		c := Comm{Content: append(json.RawMessage(nil), m.Content...)}
		for _, b := range m.Buffers {
			c.Sizes = append(c.Sizes, len(b))
			c.Digests = append(c.Digests, sha256.Sum256(b))
		}
		select {
		case k.Comms <- c:
		default: // a test that does not read them does not want them
		}
	case h.Kind.Replied():
		k.reply(channel, m, wire.ReplyType(h.MsgType), map[string]string{"status": "ok"})
	}
	return true
}

func (k *Kernel) reply(channel string, to *wire.Message, msgType string, content any) {
	idents := to.Idents
	if k.NoIdents.Load() && len(idents) > 1 {
		idents = idents[:1] // the peer's routing id, which the ROUTER added
	}
	m, err := k.builder.Build(idents, msgType, to.Header, content)
	if err != nil {
		panic(err) // the fake kernel's own contents always marshal
	}
	_ = k.routers[channel].Send(m.Frames())
}

func (k *Kernel) publish(parent []byte, msgType string, content any) {
	m, err := k.builder.Build([][]byte{[]byte("kernel." + msgType)}, msgType, parent, content)
	if err != nil {
		panic(err)
	}
	_ = k.iopub.Send(m.Frames())
}
