// Package zmqpeer runs a libzmq peer, zmqpeer.py under pyzmq, for the
// interop tests of the packages that speak ZMTP: the kernel and Jupyter
// speak libzmq, so that is the peer that counts. Only tests import it.
package zmqpeer

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/lockedbuf"
	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// The script travels inside the test binary, so a test finds it whatever
// its package's directory.
//
//go:embed zmqpeer.py
var script []byte

// hangLimit is how long a peer may run before it is killed: a check that
// waits for a message that never comes fails the test instead of hanging
// it. Every mode is done in well under a second.
const hangLimit = 20 * time.Second

// Peer is a running zmqpeer.py. Its stdin stays open until Finish or
// Wait: the modes that bind serve until it closes.
type Peer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr lockedbuf.Buffer
	hung   atomic.Bool
}

// Start runs zmqpeer.py MODE ENDPOINT ARGS... with the test venv's python
// (the test is skipped without one) and kills it at the end of the test.
// ARGS may be "curve" and three keys (see the script).
func Start(t testing.TB, mode, ep string, args ...string) *Peer {
	t.Helper()
	py := testenv.Python(t, "pyzmq")
	path := filepath.Join(t.TempDir(), "zmqpeer.py")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Peer{cmd: exec.Command(py, append([]string{path, mode, ep}, args...)...)}
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdout = bufio.NewReader(out)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start pyzmq peer: %v", err)
	}
	watchdog := time.AfterFunc(hangLimit, func() {
		p.hung.Store(true)
		p.cmd.Process.Kill()
	})
	t.Cleanup(func() {
		watchdog.Stop()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return p
}

// Line is the peer's next line of output: the endpoint it bound, or "ok".
func (p *Peer) Line() (string, error) {
	s, err := p.stdout.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("pyzmq peer said nothing (%w): %s", err, p.Stderr())
	}
	return strings.TrimSpace(s), nil
}

// Bound is the endpoint a binding mode prints once it is ready; the test
// fails without it.
func (p *Peer) Bound(t testing.TB) string {
	t.Helper()
	ep, err := p.Line()
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// Finish waits for the peer to print "ok" (every check of its mode passed)
// and exit cleanly.
func (p *Peer) Finish() error {
	s, err := p.Line()
	if err == nil && s != "ok" {
		err = fmt.Errorf("pyzmq peer printed %q", s)
	}
	return errors.Join(err, p.Wait())
}

// Wait closes the peer's stdin, which ends the binding modes, and waits
// for it to exit; a failure carries what it printed on stderr.
func (p *Peer) Wait() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		if p.hung.Load() {
			err = fmt.Errorf("%w: killed after %v", err, hangLimit)
		}
		return fmt.Errorf("pyzmq peer: %w: %s", err, p.Stderr())
	}
	return nil
}

// Stderr is what the peer has printed on stderr so far: a traceback, when
// one of its checks failed.
func (p *Peer) Stderr() string { return p.stderr.String() }

// BindEndpoint is where a binding mode should bind for scheme ("tcp" or
// "ipc"): any free port on the loopback, or a fresh socket path.
func BindEndpoint(t testing.TB, scheme string) string {
	t.Helper()
	switch scheme {
	case "tcp":
		return "tcp://127.0.0.1:*"
	case "ipc":
		return "ipc://" + SocketPath(t)
	}
	t.Fatalf("scheme %q is not tcp or ipc", scheme)
	return ""
}

// SocketPath is a unix socket path in a directory removed at the end of
// the test. It is kept short, where t.TempDir's can be long: sun_path
// holds 108 bytes.
func SocketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s")
}
