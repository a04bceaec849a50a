package proctree

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeHostProc writes a host /proc: each process's status with its NSpid
// line and its ns/pid link (dangling, as a link to a namespace reads).
func fakeHostProc(t *testing.T, procs map[int][2]string) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		status := "Name:\tpython3\nTgid:\t" + strconv.Itoa(pid) + "\n" + p[0] + "PPid:\t1\n"
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p[1], filepath.Join(dir, "ns", "pid")); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHostProcLocal(t *testing.T) {
	const ours, theirs, nested = "pid:[4026532001]", "pid:[4026532002]", "pid:[4026532003]"
	root := fakeHostProc(t, map[int][2]string{
		4100: {"NSpid:\t4100\t7\n", ours},            // our kernel: pid 7 to us
		4101: {"NSpid:\t4101\t8\n", ours},            // its worker
		5200: {"NSpid:\t5200\t7\n", theirs},          // another container's pid 7
		5300: {"NSpid:\t5300\n", "pid:[4026531836]"}, // a host process
		5400: {"NSpid:\t5400\t9\t1\n", nested},       // a sandbox inside our container
	})
	h := NewHostProc(root, ours)
	tests := []struct {
		host, want int
		ok         bool
	}{
		{4100, 7, true},
		{4101, 8, true},
		{5200, 0, false},
		{5300, 0, false},
		{5400, 0, false},
		{6000, 0, false}, // gone
	}
	for _, tt := range tests {
		got, ok, err := h.Local(tt.host)
		if err != nil || got != tt.want || ok != tt.ok {
			t.Errorf("Local(%d) = %d, %v, %v; want %d, %v, nil", tt.host, got, ok, err, tt.want, tt.ok)
		}
	}
}

func TestHostProcThatIsNotTheHosts(t *testing.T) {
	// A /proc of our own namespace: its NSpid lines have one level only.
	const ours = "pid:[4026532001]"
	root := fakeHostProc(t, map[int][2]string{7: {"NSpid:\t7\n", ours}, 8: {"Uid:\t0\n", ours}})
	h := NewHostProc(root, ours)
	for _, pid := range []int{7, 8} {
		if _, ok, err := h.Local(pid); ok || err == nil {
			t.Errorf("Local(%d) in a /proc that is not the host's: ok %v, error %v; want an error", pid, ok, err)
		}
	}
}

func TestHostProcOfARealNamespace(t *testing.T) {
	// unshare forks the shell as pid 1 of a new pid namespace; our /proc is
	// the host's to it.
	u := start(t, "unshare", "--pid", "--fork", "sh", "-c", "echo $$; exec sleep 30")
	if inner := u.line(t); inner != "1" {
		t.Fatalf("shell in a new namespace says its pid is %s", inner)
	}
	tree, err := Descendants(u.pid())
	if err != nil || len(tree) != 2 {
		t.Fatalf("Descendants(unshare) = %v, %v; want unshare and its shell", tree, err)
	}
	ns, err := os.Readlink(procPath(tree[1], "ns/pid"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := NewHostProc("/proc", ns).Local(tree[1])
	if err != nil || !ok || got != 1 {
		t.Errorf("Local(%d) seen from its namespace = %d, %v, %v; want 1, true, nil", tree[1], got, ok, err)
	}
	if _, ok, err := NewHostProc("/proc", ns).Local(u.pid()); ok || err != nil {
		t.Errorf("Local of unshare itself, outside the namespace = %v, %v; want not ours", ok, err)
	}
}
