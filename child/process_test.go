package child

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// alive is false for a zombie too: a killed orphan waits for init to reap it.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	return !strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

func TestStopLeavesNothingBehind(t *testing.T) {
	var out, errs syncBuf
	// The grandchild ignores SIGTERM, as a stuck worker would.
	p, err := Start(Spec{
		Argv:   []string{"sh", "-c", `echo out; echo err >&2; sh -c 'trap "" TERM; echo $$ >&2; sleep 60' & wait`},
		Env:    os.Environ(),
		Stdout: &out, Stderr: &errs,
	})
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	eventually(t, func() bool {
		lines := strings.Fields(errs.String())
		if len(lines) == 2 {
			grandchild, _ = strconv.Atoi(lines[1])
		}
		return grandchild != 0
	}, "the grandchild to start; stderr %q", &errs)
	p.Stop(200 * time.Millisecond)
	p.DrainOutput(time.Second)
	if out.String() != "out\n" {
		t.Fatalf("stdout %q", out.String())
	}
	// Killed, it is reaped by init, not by us: its end may come a little later.
	eventually(t, func() bool { return !alive(grandchild) }, "grandchild %d to go after Stop", grandchild)
}

// eventually waits until cond holds. Its limit only keeps a broken test
// from hanging: a loaded machine may take long, never this long.
func eventually(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for "+what, args...)
		}
	}
}

func TestExitStatusSeenAtOnce(t *testing.T) {
	// A worker that keeps the output pipes open must not hide the death.
	p, err := Start(Spec{Argv: []string{"sh", "-c", "sleep 30 & exit 3"}, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("exit not seen while a grandchild holds the pipes")
	}
	if code := p.State().ExitCode(); code != 3 {
		t.Fatalf("exit code %d", code)
	}
	p.Stop(0)
}

func TestStartError(t *testing.T) {
	if _, err := Start(Spec{Argv: []string{"/nonexistent/kernel"}}); err == nil || !strings.Contains(err.Error(), "/nonexistent/kernel") {
		t.Fatalf("error %v does not name the command", err)
	}
}
