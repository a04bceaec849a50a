package proctree

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// child is a real process started for a test, in its own process group so
// that cleanup kills it together with everything it started.
type child struct {
	cmd *exec.Cmd
	out *bufio.Scanner
}

func start(t testing.TB, name string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return &child{cmd: cmd, out: bufio.NewScanner(stdout)}
}

// line waits for the child's next line of output: children print once they
// are ready, so tests wait on them instead of on a clock.
func (c *child) line(t testing.TB) string {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("%v ended before printing: %v", c.cmd.Args, c.out.Err())
	}
	return strings.TrimSpace(c.out.Text())
}

// pids reads n lines, each a pid.
func (c *child) pids(t testing.TB, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		pid, err := strconv.Atoi(c.line(t))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// exitedPID returns the pid of a process that has come and gone.
func exitedPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// startHog starts a python that fills mib MiB of its own memory, so every
// page is resident, and waits until it is done.
func startHog(t testing.TB, mib int) *child {
	t.Helper()
	c := start(t, "python3", "-c", `
import signal, sys
hog = bytearray(b"\x01") * (int(sys.argv[1]) << 20)
print("ready", flush=True)
signal.pause()`, strconv.Itoa(mib))
	c.line(t)
	return c
}

// vmRSS is the kernel's own figure for a process's resident memory.
func vmRSS(t testing.TB, pid int) uint64 {
	t.Helper()
	data, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	value, ok := lookup(data, "VmRSS")
	if !ok {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	rss, err := parseKB(value)
	if err != nil {
		t.Fatal(err)
	}
	return rss
}

// near tells whether got is within 10% of want.
func near(got, want uint64) bool {
	diff := max(got, want) - min(got, want)
	return diff*10 <= want
}
