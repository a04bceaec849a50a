package diagnosis

import (
	"strings"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
)

func TestRealOOMKillInOwnCgroup(t *testing.T) {
	const limit = 128 << 20
	cg := cgrouptest.New(t, limit)
	kmsg, err := NewKmsgWatcher()
	if err != nil {
		t.Fatalf("as root the kernel log should be readable: %v", err)
	}
	defer kmsg.Close()

	r := newCellRun(t, "allocate.py", 12)
	stdin, err := r.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Runs before the cgroup's removal: a cgroup with a process in it
	// cannot be removed.
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	before := cg.OOMKills()
	cg.Add(r.cmd.Process.Pid)
	stdin.Close() // the child allocates 300 MiB once its stdin closes

	ev := r.wait(t)
	ev.OOMKills = OOMCounter{Known: true, Before: before, After: cg.OOMKills()}
	ev.KernelLog = kmsg.Collect([]int{ev.PID})
	ev.Memory = Memory{Limit: limit, LimitSource: "cgroup v1 /jupyter/alice"}
	d := Diagnose(ev)
	t.Logf("\n%s", strings.Join(d.Traceback, "\n"))

	if ev.Exit.Signal != syscall.SIGKILL {
		t.Fatalf("exit = %v, want SIGKILL", ev.Exit)
	}
	if got := ev.OOMKills.kills(); got != 1 {
		t.Errorf("oom_kill moved by %d, want 1", got)
	}
	if d.Cause != CauseOOMCgroup {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseOOMCgroup)
	}
	// The summary line is logged before the SIGKILL, so it is there by the
	// time the child is reaped; "Killed process" comes just after the signal.
	if d.OOMKill == nil || d.OOMKill.PID != ev.PID || d.OOMKill.Global {
		t.Fatalf("kernel log evidence = %+v, want a cgroup OOM kill of pid %d", d.OOMKill, ev.PID)
	}
	if d.OOMKill.Kind == EventOOMKill && d.OOMKill.OOMMemcg != cg.Path() {
		t.Errorf("oom_memcg = %q, want our cgroup %s", d.OOMKill.OOMMemcg, cg.Path())
	}
	if !strings.HasPrefix(d.Evalue, "The kernel was killed by the Linux out-of-memory killer while running cell [12]") {
		t.Errorf("Evalue = %s", d.Evalue)
	}
}
