package proctree

import (
	"os"
	"testing"
	"time"
)

func TestParseHostCPU(t *testing.T) {
	stat := "cpu  100 5 50 800 40 3 2 0 30 0\ncpu0 50 2 25 400 20 1 1 0 15 0\ncpu1 50 3 25 400 20 2 1 0 15 0\nintr 1 2 3\nctxt 9\n"
	h, err := ParseHostCPU([]byte(stat))
	// The guest time (30) is in the user time already.
	want := HostCPU{Busy: 100 + 5 + 50 + 3 + 2, Total: 100 + 5 + 50 + 800 + 40 + 3 + 2, CPUs: 2}
	if err != nil || h != want {
		t.Errorf("ParseHostCPU = %+v, %v; want %+v", h, err, want)
	}
	for _, bad := range []string{"intr 1\n", "cpu 1 2 3\ncpu0 1 2 3\n", "cpu 1 2 3 x 5 6 7 8\ncpu0 1\n", "cpu 1 2 3 4 5 6 7 8\n"} {
		if _, err := ParseHostCPU([]byte(bad)); err == nil {
			t.Errorf("ParseHostCPU(%q): no error", bad)
		}
	}
}

// A process that spins on one CPU reads near 100 %; one that sleeps, near 0;
// each only from the second call on.
func TestCPUMeterOfSpinningAndSleepingProcesses(t *testing.T) {
	spin := start(t, "sh", "-c", "echo $$; while :; do :; done")
	sleep := start(t, "sh", "-c", "echo $$; exec sleep 60")
	pids := append(spin.pids(t, 1), sleep.pids(t, 1)...)
	m := NewCPUMeter()
	if first, err := m.Tree(pids); err != nil || first != 0 {
		t.Fatalf("first Tree = %v, %v; want 0 as psutil's first cpu_percent", first, err)
	}
	if _, err := m.Host(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	both, err := m.Tree(pids)
	if err != nil {
		t.Fatal(err)
	}
	// A loaded machine may give the spinner less than a whole CPU.
	if both < 30 || both > 110 {
		t.Errorf("a spinning and a sleeping process: %.1f %%, want about 100", both)
	}
	host, err := m.Host()
	if err != nil || !host.Known || host.CPUs < 1 || host.Percent < 100/float64(host.CPUs)*0.3 || host.Percent > 100 {
		t.Errorf("Host with a process spinning = %+v, %v", host, err)
	}
	time.Sleep(200 * time.Millisecond)
	if idle, err := m.Tree(pids[1:]); err != nil || idle > 5 {
		t.Errorf("a sleeping process: %.1f %%, %v; want about 0", idle, err)
	}
	if gone, err := m.Tree([]int{exitedPID(t), os.Getpid()}); err != nil || gone != 0 {
		t.Errorf("a gone process and one first seen: %.1f %%, %v; want 0", gone, err)
	}
}
