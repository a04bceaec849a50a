package cgroup_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
)

// allocator is a python inside a test group: once told to go, it allocates
// and touches some MiB, says "ready" and waits for stdin to close.
type allocator struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func allocate(t *testing.T, g *cgrouptest.Group, mib int) *allocator {
	t.Helper()
	cmd := g.Command(testenv.Python(t, "numpy"), "-c", fmt.Sprintf(`import numpy, sys
print('started', flush=True)
sys.stdin.readline()
a = numpy.ones(%d << 20, dtype=numpy.uint8)
print('ready', flush=True)
sys.stdin.read()`, mib))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	a := &allocator{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	a.expect(t, "started")
	return a
}

func (a *allocator) expect(t *testing.T, want string) {
	t.Helper()
	if line, err := a.out.ReadString('\n'); line != want+"\n" {
		t.Fatalf("allocator: read %q, %v, want %q; exit: %v", line, err, want, a.cmd.Wait())
	}
}

// allocate lets it allocate.
func (a *allocator) allocate(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(a.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// killedByOOM waits for the process and checks it died of SIGKILL.
func (a *allocator) killedByOOM(t *testing.T) {
	t.Helper()
	err := a.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("allocator ended with %v, want SIGKILL", err)
	}
}
