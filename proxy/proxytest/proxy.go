package proxytest

import (
	"context"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/client"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Patience is how long the harness waits for what should come at once:
// only a hang or a lost message takes this long.
const Patience = 10 * time.Second

// Proxy is package proxy listening on loopback tcp ports for frontends,
// attached to a Kernel.
type Proxy struct {
	*proxy.Proxy
	// Conn is the connection file frontends are given: the Kernel's key,
	// the proxy's ports.
	Conn kernelspec.ConnectionInfo
	Log  *Log
}

// StartProxy starts a proxy attached to k, closed at the end of the test,
// with hooks that let every message through.
func StartProxy(t testing.TB, k *Kernel) *Proxy {
	t.Helper()
	return StartProxyHooks(t, k, passHooks{})
}

// StartProxyHooks starts a proxy with hooks of the test's own.
func StartProxyHooks(t testing.TB, k *Kernel, hooks proxy.Hooks) *Proxy {
	t.Helper()
	lines := &Log{}
	logger := log.New(lines, "", 0)
	var p *proxy.Proxy
	var front kernelspec.ConnectionInfo
	var err error
	// Free ports, picked and then bound: another process may take one in
	// between, rarely; then new ones are picked.
	for range 5 {
		front = k.Conn
		ports := freePorts(t, 5)
		front.ShellPort, front.ControlPort, front.StdinPort, front.IOPubPort, front.HBPort = ports[0], ports[1], ports[2], ports[3], ports[4]
		if p, err = proxy.Listen(front, hooks, logger); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	if err := p.Attach(ctx, k.Conn, func() {}); err != nil {
		t.Fatal(err)
	}
	return &Proxy{Proxy: p, Conn: front, Log: lines}
}

func freePorts(t testing.TB, n int) []int {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// Endpoint is where the proxy listens for ch, as a peer dials it.
func (p *Proxy) Endpoint(ch wire.Channel) string {
	port := map[wire.Channel]int{wire.Shell: p.Conn.ShellPort, wire.Control: p.Conn.ControlPort,
		wire.Stdin: p.Conn.StdinPort, wire.IOPub: p.Conn.IOPubPort, wire.HB: p.Conn.HBPort}[ch]
	return p.Conn.Endpoint(port)
}

// Dial connects a frontend (package client) to the proxy, closed at the
// end of the test.
func (p *Proxy) Dial(t testing.TB) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	c, err := client.Dial(ctx, p.Conn)
	if err != nil {
		t.Fatalf("a frontend could not connect: %v\n--- the proxy's log:\n%s", err, p.Log)
	}
	t.Cleanup(c.Close)
	return c
}

// passHooks let every message through, as a proxy without a guard would.
type passHooks struct{}

func (passHooks) FromFrontend(*proxy.Request, *wire.Message) bool { return true }
func (passHooks) FromKernel(wire.Channel, *wire.Message, wire.Header, *proxy.Request, string) <-chan struct{} {
	return nil
}
func (passHooks) Unserved(*proxy.Request) {}

// Log is what the proxy logged, a line per Write.
type Log struct {
	mu    sync.Mutex
	lines []string
}

func (l *Log) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// Lines are the lines so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *Log) String() string { return strings.Join(l.Lines(), "\n") }

// Count is how many lines contain s.
func (l *Log) Count(s string) int {
	n := 0
	for _, line := range l.Lines() {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}
