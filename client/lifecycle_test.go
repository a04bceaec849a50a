package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// sleeper is a cell that says it has started, then sleeps for long in
// short naps. The test interrupts it as soon as the print arrives, which
// can be before the sleep's system call: the SIGINT is then noted, but
// Python raises KeyboardInterrupt only between bytecodes, so one
// time.sleep(600) would run its course (seen about 1 run in 250, two
// tests side by side).
const sleeper = "import time\nprint('sleeping', flush=True)\nfor _ in range(6000):\n    time.sleep(0.1)"

// interruptWhenRunning runs sleeper and interrupts it once its output shows
// it is running; it returns the reply.
func interruptWhenRunning(t *testing.T, k *Kernel) *Reply {
	t.Helper()
	ctx := testCtx(t)
	interrupted := make(chan error, 1)
	reply, err := k.Client.Execute(ctx, sleeper, ExecuteOptions{}, func(m *Message) {
		if m.Header.MsgType == "stream" && len(interrupted) == 0 {
			go func() { interrupted <- k.Interrupt(ctx) }()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-interrupted; err != nil {
		t.Fatal(err)
	}
	return reply
}

func TestInterrupt(t *testing.T) {
	modes(t, func(t *testing.T, spec *kernelspec.KernelSpec) {
		k := launch(t, spec)
		if reply := interruptWhenRunning(t, k); reply.Status != "error" || reply.Ename != "KeyboardInterrupt" {
			t.Fatalf("reply %+v", reply)
		}
		// The kernel is still usable.
		if reply, _ := run(t, k, "'alive'", ExecuteOptions{}); reply.Status != "ok" {
			t.Fatalf("after the interrupt: %+v", reply)
		}
	})
	t.Run("message mode", func(t *testing.T) {
		spec := ipykernelSpec(t, testPython(t))
		spec.InterruptMode = "message"
		k := launch(t, spec)
		if reply := interruptWhenRunning(t, k); reply.Status != "error" || reply.Ename != "KeyboardInterrupt" {
			t.Fatalf("reply %+v", reply)
		}
	})
}

// TestShutdownLeavesNothing starts a kernel that has a child of its own and
// checks that after Shutdown no process of its tree is left, nor the
// connection file. Its runtime dir does not exist yet, as on a fresh
// machine: Launch makes it, private, as jupyter_client does.
func TestShutdownLeavesNothing(t *testing.T) {
	modes(t, func(t *testing.T, spec *kernelspec.KernelSpec) {
		ctx := testCtx(t)
		runtime := filepath.Join(t.TempDir(), "jupyter", "runtime")
		k, err := Launch(ctx, spec, LaunchOptions{RuntimeDir: runtime, Stderr: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(runtime); err != nil {
			t.Error(err)
		} else if st.Mode().Perm() != 0o700 {
			t.Errorf("runtime dir %s has mode %v; want it made with mode 0700", runtime, st.Mode().Perm())
		}
		if reply, _ := run(t, k, "import subprocess\np = subprocess.Popen(['sleep', '600'])", ExecuteOptions{}); reply.Status != "ok" {
			t.Fatalf("reply %+v", reply)
		}
		tree, err := proctree.Descendants(k.Pid())
		if err != nil {
			t.Fatal(err)
		}
		if len(tree) < 2 { // the kernel (or the guard) and at least one child
			t.Fatalf("the kernel's tree is only %v", tree)
		}
		if err := k.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		for _, pid := range tree {
			if alive(pid) {
				t.Errorf("pid %d of the kernel's tree %v is still running", pid, tree)
			}
		}
		if _, err := os.Stat(k.ConnFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("connection file left: %v", err)
		}
	})
}

// alive says whether pid runs; a zombie waiting for init does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestKernelDeath: a kernel killed under the client. Direct, the client
// reports the lost connection; guarded with the proxy restarting it in
// place (as under a Jupyter server, and guardctl run), the cell gets the
// guard's KernelDied error; guarded with nobody to say otherwise, the
// proxy ends with the kernel, as a plain one: the connection is lost, with
// the diagnosis in the cell before that.
func TestKernelDeath(t *testing.T) {
	py := testPython(t)
	const kill = "import os\nos.kill(os.getpid(), 9)"
	t.Run("direct", func(t *testing.T) {
		k := launch(t, ipykernelSpec(t, py))
		_, err := k.Client.Execute(testCtx(t), kill, ExecuteOptions{}, nil)
		if err == nil || !strings.Contains(err.Error(), "connection to the kernel is lost") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("guarded-headless", func(t *testing.T) {
		k := launch(t, guardedSpec(t, ipykernelSpec(t, py)))
		var msgs []*Message
		_, err := k.Client.Execute(testCtx(t), kill, ExecuteOptions{}, func(m *Message) { msgs = append(msgs, m) })
		if err == nil || !strings.Contains(err.Error(), "connection to the kernel is lost") {
			t.Fatalf("err %v", err)
		}
		if errs := outputs(msgs, "error"); len(errs) != 1 || content(t, errs[0])["ename"] != "KernelDied" {
			t.Fatalf("error outputs %v", errs)
		}
	})
	t.Run("guarded", func(t *testing.T) {
		t.Setenv("JUPYTER_GUARD_RESTART", "guard")
		k := launch(t, guardedSpec(t, ipykernelSpec(t, py)))
		reply, msgs := run(t, k, kill, ExecuteOptions{})
		if reply.Status != "error" || reply.Ename != "KernelDied" {
			t.Fatalf("reply %+v", reply)
		}
		errs := outputs(msgs, "error")
		if len(errs) != 1 || content(t, errs[0])["ename"] != "KernelDied" ||
			!strings.Contains(content(t, errs[0])["evalue"].(string), "SIGKILL") {
			t.Fatalf("error outputs %v", errs)
		}
	})
}

// TestBadSignature: a client holding the wrong key rejects what the kernel
// publishes, with an error naming the channel.
func TestBadSignature(t *testing.T) {
	k := launch(t, ipykernelSpec(t, testPython(t)))
	ci := k.Conn
	ci.Key = "not-the-key"
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := Dial(ctx, ci)
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	// The kernel ignores the bad client's requests; what it publishes for
	// the good one reaches the bad one's iopub once subscribed.
	for {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "iopub channel: a message with a bad signature") {
				t.Fatalf("Dial with the wrong key: %v", err)
			}
			return
		default:
			run(t, k, "pass", ExecuteOptions{})
		}
	}
}

func TestLaunchFailure(t *testing.T) {
	spec := &kernelspec.KernelSpec{
		Name: "broken",
		Argv: []string{testPython(t), "-c", "import sys; sys.stderr.write('no kernel here\\n'); sys.exit(3)"},
	}
	_, err := Launch(testCtx(t), spec, LaunchOptions{RuntimeDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited while starting (exit status 3)") ||
		!strings.Contains(err.Error(), "no kernel here") {
		t.Fatalf("err %v", err)
	}
}

// TestDialGivesUp: with nothing listening, Dial retries until its context
// ends, then says so.
func TestDialGivesUp(t *testing.T) {
	ci, err := newConnection("none")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, ci); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}
