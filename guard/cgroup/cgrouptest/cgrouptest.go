// Package cgrouptest gives integration tests a real cgroup v1 memory group
// of their own, nested under the test process's cgroup, with a limit, and
// removes it when the test ends.
package cgrouptest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
)

// Group is a nested v1 memory cgroup owned by one test.
type Group struct {
	t  testing.TB
	cg *cgroup.Group
}

var seq atomic.Int64

// New creates a memory cgroup limited to limitBytes under the test process's
// own, and removes it (killing what is left in it) when the test ends.
// Where cgroup v1 memory is missing or not writable the test is Missing it
// (see testenv). Swap is capped too where the kernel accounts it, so going
// past the limit ends in an OOM kill rather than swapping.
func New(t testing.TB, limitBytes uint64) *Group {
	t.Helper()
	self, err := cgroup.Discover(os.Getpid())
	if err != nil {
		testenv.Missing(t, "no cgroup v1 memory controller for this test: %v", err)
	}
	if self.Version != cgroup.V1 {
		testenv.Missing(t, "the memory controller is on %v here, cgrouptest needs cgroup v1", self.Version)
	}
	name := fmt.Sprintf("cgrouptest-%d-%d", os.Getpid(), seq.Add(1))
	cg, err := self.NewChild(name)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		testenv.Missing(t, "cgroup v1 memory is not writable here: %v", err)
	}
	if err != nil {
		t.Fatalf("cgrouptest: %v", err)
	}
	g := &Group{t: t, cg: cg}
	t.Cleanup(g.remove)
	if err := cg.SetLimit(limitBytes); err != nil {
		t.Fatalf("cgrouptest: %v", err)
	}
	if err := capSwap(cg, limitBytes); err != nil {
		t.Fatalf("cgrouptest: %v", err)
	}
	return g
}

// capSwap sets memory+swap to the memory limit, where swap is accounted.
func capSwap(cg *cgroup.Group, limit uint64) error {
	f, err := os.OpenFile(cg.Dir+"/memory.memsw.limit_in_bytes", os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := fmt.Fprint(f, limit); err != nil {
		return fmt.Errorf("capping swap of %s at %d: %w", cg.Path, limit, err)
	}
	return nil
}

// Cgroup is the group, for the cgroup package's own calls.
func (g *Group) Cgroup() *cgroup.Group { return g.cg }

// Path is the group's cgroup path, as /proc/PID/cgroup and the kernel's OOM
// messages name it.
func (g *Group) Path() string { return g.cg.Path }

// Dir is the group's directory.
func (g *Group) Dir() string { return g.cg.Dir }

// Add moves a running process into the group.
func (g *Group) Add(pid int) {
	g.t.Helper()
	if err := g.cg.AddProc(pid); err != nil {
		g.t.Fatalf("cgrouptest: %v", err)
	}
}

// OOMKills is the group's OOM-kill counter.
func (g *Group) OOMKills() uint64 {
	g.t.Helper()
	s, err := g.cg.OOM()
	if err != nil {
		g.t.Fatalf("cgrouptest: %v", err)
	}
	return s.Kills
}

// Wrap returns an argv that runs argv inside the group from its first
// instruction: a shell writes its own pid to cgroup.procs, then execs argv
// (same pid). If the write fails the shell exits non-zero and argv never
// runs outside the group. Use it where a command line is handed to code
// under test.
func (g *Group) Wrap(argv ...string) []string {
	return append([]string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, g.cg.Dir + "/cgroup.procs"}, argv...)
}

// Command is exec.Command for a process that lives in the group from birth.
func (g *Group) Command(name string, args ...string) *exec.Cmd {
	argv := g.Wrap(append([]string{name}, args...)...)
	return exec.Command(argv[0], argv[1:]...)
}

// remove kills what is left in the group and in any cgroup a test made
// below it, and removes them all.
func (g *Group) remove() {
	var err error
	for range 200 {
		if err = removeTree(g.cg.Dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond) // killed tasks still hold their group until they are gone
	}
	g.t.Errorf("cgrouptest: could not remove %s, remove it by hand: %v", g.cg.Dir, err)
}

// removeTree kills the tasks of a cgroup directory and of those below it,
// and removes them, deepest first.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(string(procs)) {
		// Never kill(0) or kill(-1): they would hit the test itself.
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return os.Remove(dir)
}
