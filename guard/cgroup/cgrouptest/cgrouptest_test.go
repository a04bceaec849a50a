package cgrouptest

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// memoryLine is the memory controller's line of /proc/PID/cgroup.
func memoryLine(t *testing.T, pid string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == "memory" {
			return f[2]
		}
	}
	t.Fatalf("/proc/%s/cgroup has no memory line", pid)
	return ""
}

func TestCommandStartsInside(t *testing.T) {
	g := New(t, 64<<20)
	out, err := g.Command("cat", "/proc/self/cgroup").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), ":memory:"+g.Path()+"\n") {
		t.Errorf("the command ran in\n%s\nnot in %s", out, g.Path())
	}
}

func TestWrapFailsClosed(t *testing.T) {
	g := New(t, 64<<20)
	argv := g.Wrap("true")
	argv[3] = "/nonexistent/cgroup.procs" // as if the group were gone
	if err := exec.Command(argv[0], argv[1:]...).Run(); err == nil {
		t.Error("the command ran although it could not join the group")
	}
}

func TestAddAndOOMKills(t *testing.T) {
	g := New(t, 64<<20)
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	g.Add(cmd.Process.Pid)
	if got := memoryLine(t, "self"); got == g.Path() {
		t.Fatal("Add moved the test itself")
	}
	if got := memoryLine(t, strconv.Itoa(cmd.Process.Pid)); got != g.Path() {
		t.Errorf("after Add the process is in %s, want %s", got, g.Path())
	}
	if n := g.OOMKills(); n != 0 {
		t.Errorf("OOMKills() = %d in a new group", n)
	}
}

// Cleanup kills what is left, in the group and in groups below it, and
// removes them.
func TestCleanup(t *testing.T) {
	var dir string
	var cmd *exec.Cmd
	t.Run("leaves a task behind", func(t *testing.T) {
		g := New(t, 64<<20)
		dir = g.Dir()
		child, err := g.Cgroup().NewChild("nested")
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command("/bin/sh", "-c", `echo $$ > "$0" && echo joined && exec sleep 1000`, child.Dir+"/cgroup.procs")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); line != "joined\n" {
			t.Fatalf("read %q, %v", line, err)
		}
	})
	if cmd == nil {
		t.Skip("the subtest was skipped")
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the task left behind ended with %v, want SIGKILL", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still exists (%v)", dir, err)
	}
}
