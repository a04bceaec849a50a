package child

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markedTree starts, with marker in its environment, a shell that leaves
// behind what a kernel does: a job in a session of its own, a stopped
// process (a paused tree), and an orphan. It returns their pids.
func markedTree(t *testing.T, marker string) []int {
	t.Helper()
	file := t.TempDir() + "/pids"
	// The sleeps get no pipe of ours, so the shell's end is not held up.
	script := `exec >/dev/null 2>&1; setsid sleep 60 & echo $! >>"$0"; sleep 60 & kill -STOP $!; echo $! >>"$0"; (sleep 60 & echo $! >>"$0")`
	cmd := exec.Command("sh", "-c", script, file)
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Run(); err != nil { // the shell ends; its three sleeps live on
		t.Fatal(err)
	}
	out, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		}
	}
	if len(pids) != 3 {
		t.Fatalf("the shell said %q", out)
	}
	return pids
}

func TestKeepEndsTheMarkedTreeWhenTheProxyGoes(t *testing.T) {
	const marker = TreeMarker + "=test-keep"
	pids := markedTree(t, marker)
	other := exec.Command("sleep", "60") // not marked: left alone
	other.Env = append(os.Environ(), TreeMarker+"=another-kernel")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() {
		n, err := Keep(r, marker)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	select {
	case <-done:
		t.Fatal("Keep swept while the proxy's end was open")
	case <-time.After(50 * time.Millisecond):
	}
	w.Close() // the proxy is gone
	if n := <-done; n != len(pids) {
		t.Errorf("Keep killed %d processes, want %d", n, len(pids))
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d outlived the sweep", pid)
		}
	}
	if !alive(other.Process.Pid) {
		t.Error("the sweep killed another kernel's process")
	}
}
