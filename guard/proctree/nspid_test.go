package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

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
