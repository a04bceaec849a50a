package proctree

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestNSpidOfAProcessInOurNamespace(t *testing.T) {
	sh := start(t, "sh", "-c", "echo ready; exec sleep 30")
	sh.line(t)
	got, err := NSpid(sh.pid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{sh.pid()}) {
		t.Errorf("NSpid(%d) = %v, want just itself", sh.pid(), got)
	}
}

func TestNSpidInANestedNamespace(t *testing.T) {
	// unshare forks the shell as pid 1 of a new pid namespace; /proc stays ours.
	u := start(t, "unshare", "--pid", "--fork", "sh", "-c", "echo $$; exec sleep 30")
	inner := u.line(t)
	if inner != "1" {
		t.Fatalf("shell in a new namespace says its pid is %s", inner)
	}
	tree, err := Descendants(u.pid())
	if err != nil || len(tree) != 2 {
		t.Fatalf("Descendants(unshare) = %v, %v; want unshare and its shell", tree, err)
	}
	got, err := NSpid(tree[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{tree[1], 1}; !slices.Equal(got, want) {
		t.Errorf("NSpid(%d) = %v, want %v", tree[1], got, want)
	}
}

func TestNSpidOfAGoneProcess(t *testing.T) {
	if _, err := NSpid(exitedPID(t)); !errors.Is(err, ErrGone) {
		t.Errorf("NSpid of a gone process: %v, want ErrGone", err)
	}
}

// seesHostPIDsEnv makes the test binary print SeesHostPIDs and exit, so the
// tests below can ask from inside other pid namespaces.
const seesHostPIDsEnv = "PROCTREE_PRINT_SEES_HOST_PIDS"

func TestMain(m *testing.M) {
	if os.Getenv(seesHostPIDsEnv) != "" {
		sees, err := SeesHostPIDs()
		fmt.Println(sees, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// seesHostPIDsUnder runs SeesHostPIDs in a copy of this test binary started
// under unshare with the given options.
func seesHostPIDsUnder(t *testing.T, unshareArgs ...string) string {
	t.Helper()
	cmd := exec.Command("unshare", append(unshareArgs, os.Args[0])...)
	cmd.Env = append(os.Environ(), seesHostPIDsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("cannot make a pid namespace here: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestSeesHostPIDs(t *testing.T) {
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	if own != hostPIDNamespace {
		t.Skipf("these tests start in the host's pid namespace; we run in %s", own)
	}
	tests := []struct {
		name    string
		unshare []string
		want    string
	}{
		{"on the host", nil, "true <nil>"},
		{"in a container with its own /proc", []string{"--pid", "--fork", "--mount-proc"}, "false <nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seesHostPIDsUnder(t, tt.unshare...); got != tt.want {
				t.Errorf("SeesHostPIDs() = %s, want %s", got, tt.want)
			}
		})
	}
}
