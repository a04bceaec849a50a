// Package growtest runs a stand-in kernel for the guard's real-process tests
// and benchmarks: a python that grows its memory on command, in its own
// process group, whose SIGINT ends the running command and keeps the rest
// (see grow.py for the commands); and a stand-in supervisor (Frontend) that
// puts it under a guard.
package growtest

import (
	"bufio"
	_ "embed"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

//go:embed grow.py
var script []byte

// Python is the test venv's interpreter (see testenv): grow.py needs numpy.
func Python(t testing.TB) string { return testenv.Python(t, "numpy") }

// Proc is a running grow.py.
type Proc struct {
	Pid    int
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []string // its output, split into fields; closed at its end
	killed sync.Once
}

// Start runs grow.py. wrap, if given, is put in front of the command line
// (cgrouptest's Wrap starts it inside a cgroup). It is killed, with its
// whole process group, when the test ends.
func Start(t testing.TB, wrap func(argv ...string) []string) *Proc {
	t.Helper()
	file := filepath.Join(t.TempDir(), "grow.py")
	if err := os.WriteFile(file, script, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{Python(t), "-u", file}
	if wrap != nil {
		argv = wrap(argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start grow.py: %v", err)
	}
	p := &Proc{Pid: cmd.Process.Pid, cmd: cmd, in: in, lines: make(chan []string, 64)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- strings.Fields(sc.Text())
		}
	}()
	t.Cleanup(p.Kill)
	if f := p.Expect(t, "ready"); len(f) != 1 || f[0] != strconv.Itoa(p.Pid) {
		t.Fatalf("grow.py says it is %v, started as pid %d", f, p.Pid)
	}
	return p
}

// Kill ends it with its whole process group and waits for it, giving its
// memory back at once (a benchmark starts many). The test's end does it too.
func (p *Proc) Kill() {
	p.killed.Do(func() {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		p.in.Close()
		p.cmd.Wait()
	})
}

// Send writes one command.
func (p *Proc) Send(t testing.TB, command string) {
	t.Helper()
	if _, err := io.WriteString(p.in, command+"\n"); err != nil {
		t.Fatalf("grow.py %q: %v", command, err)
	}
}

// Expect reads lines until one starts with word and returns the rest of
// its fields. It fails the test if the process ends first.
func (p *Proc) Expect(t testing.TB, word string) []string {
	t.Helper()
	for f := range p.lines {
		if len(f) > 0 && f[0] == word {
			return f[1:]
		}
	}
	t.Fatalf("grow.py ended before saying %q", word)
	return nil
}

// Lines is its output, one line's fields at a time, for a test that waits
// on something else too. It shares the lines with Expect.
func (p *Proc) Lines() <-chan []string { return p.lines }

// Pids reads the pids on a line starting with word.
func (p *Proc) Pids(t testing.TB, word string) []int {
	t.Helper()
	var pids []int
	for _, f := range p.Expect(t, word) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("grow.py: %q is not a pid", f)
		}
		pids = append(pids, pid)
	}
	return pids
}
