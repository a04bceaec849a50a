package diagnosis

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"

	"github.com/google/uuid"
)

// testMemcg is a cgroup v1 memory cgroup the test creates for itself, as a
// child of the one the test process runs in, and removes at the end.
type testMemcg struct {
	dir string
}

// newTestMemcg creates the cgroup with a memory limit. The test's own
// cgroup is only read, never changed.
func newTestMemcg(t *testing.T, limit uint64) *testMemcg {
	t.Helper()
	parent := ownMemcgPath(t)
	dir := filepath.Join("/sys/fs/cgroup/memory", parent, "jupyter-guard-diagnosis-test-"+uuid.NewString())
	if err := os.Mkdir(dir, 0o755); err != nil {
		testenv.Missing(t, "cannot create a memory cgroup: %v", err)
	}
	cg := &testMemcg{dir: dir}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove the test cgroup: %v", err)
		}
	})
	cg.write(t, "memory.limit_in_bytes", strconv.FormatUint(limit, 10))
	// With swap accounting, swap must not let the child dodge the limit.
	if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
		cg.write(t, "memory.memsw.limit_in_bytes", strconv.FormatUint(limit, 10))
	}
	return cg
}

// ownMemcgPath is the memory controller's line of /proc/self/cgroup.
func ownMemcgPath(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		testenv.Missing(t, "no cgroups: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "4:memory:/path" on cgroup v1
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == "memory" {
			return parts[2]
		}
	}
	testenv.Missing(t, "no cgroup v1 memory controller")
	return ""
}

func (cg *testMemcg) write(t *testing.T, file, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(value), 0); err != nil {
		t.Fatalf("test cgroup %s: %v", file, err)
	}
}

// add moves a process into the cgroup.
func (cg *testMemcg) add(t *testing.T, pid int) {
	t.Helper()
	cg.write(t, "cgroup.procs", strconv.Itoa(pid))
}

// oomKills reads the oom_kill counter of memory.oom_control.
func (cg *testMemcg) oomKills(t *testing.T) uint64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cg.dir, "memory.oom_control"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		var n uint64
		if _, err := fmt.Sscanf(line, "oom_kill %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("no oom_kill in memory.oom_control:\n%s", data)
	return 0
}
