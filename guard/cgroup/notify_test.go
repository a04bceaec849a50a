package cgroup

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// next waits for an event of the given kind. The deadline only keeps a
// broken kernel path from hanging the test run.
func next(t *testing.T, n *Notifier, kind EventKind) Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-n.Events():
			if !ok {
				t.Fatalf("events closed while waiting for kind %d: %v", kind, n.Close())
			}
			if ev.Kind == kind {
				return ev
			}
			t.Logf("skipping event %+v", ev)
		case <-deadline:
			t.Fatalf("no event of kind %d", kind)
		}
	}
}

func TestNotifyV2EventsChanged(t *testing.T) {
	g := scratch(t, V2, v2Kernel, "memory.events")
	n, err := g.Notify()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Arm(1 << 30); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Arm on v2: error %v, want ErrUnsupported", err)
	}
	// The kernel rewrites memory.events when a counter moves.
	if err := os.WriteFile(g.file("memory.events"), []byte("low 0\nhigh 0\nmax 1\noom 1\noom_kill 1\noom_group_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next(t, n, EventsChanged)
}

// On a plain file the trigger is only written, never fired; what matters
// is the exact bytes the kernel gets.
func TestWatchPressureWritesTrigger(t *testing.T) {
	g := scratch(t, V2, v2Kernel, "memory.events")
	if err := os.WriteFile(g.file("memory.pressure"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := g.Notify()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.WatchPressure(150*time.Millisecond, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, g, "memory.pressure"); got != "some 150000 1000000\x00" {
		t.Errorf("trigger written %q", got)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-n.Events(); ok {
		t.Error("Events() still open after Close")
	}
	if err := n.WatchPressure(150*time.Millisecond, time.Second); !errors.Is(err, errClosed) {
		t.Errorf("WatchPressure after Close: error %v", err)
	}
}

func TestNotifyV2MissingEvents(t *testing.T) {
	if _, err := scratch(t, V2, v2Kernel).Notify(); err == nil {
		t.Error("Notify without memory.events: no error")
	}
}

func TestWatchPressureOnV1(t *testing.T) {
	n := &Notifier{g: discover(t, fakeV1, 100)}
	if err := n.WatchPressure(150*time.Millisecond, time.Second); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("WatchPressure on v1: error %v, want ErrUnsupported", err)
	}
}

// The kernel parses the trigger: a real pressure file accepts ours (with a
// window widened to 2s where we lack CAP_SYS_RESOURCE) and rejects a stall
// longer than the window.
func TestPSITriggerOnKernel(t *testing.T) {
	const file = "/proc/pressure/memory"
	fd, err := psiTrigger(file, 150*time.Millisecond, time.Second)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("no PSI triggers here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if fd, err := psiTrigger(file, 3*time.Second, 2*time.Second); err == nil {
		unix.Close(fd)
		t.Error("a stall longer than its window was accepted")
	}
}
