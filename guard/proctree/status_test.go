package proctree

import (
	"errors"
	"syscall"
	"testing"
)

func TestParseStatus(t *testing.T) {
	st, err := parseStatus([]byte("Name:\tpython3\nVmPeak:\t  1000 kB\nVmData:\t  215360 kB\nVmStk:\t     132 kB\nVmExe:\t 4 kB\n" +
		"SigIgn:\t0000000001001000\nSigCgt:\t2000000100000002\n"))
	if want := (Status{Data: 215360 << 10, Stack: 132 << 10, Caught: 0x2000000100000002}); st != want || err != nil {
		t.Errorf("parseStatus = %+v, %v; want %+v", st, err, want)
	}
	if !st.Catches(syscall.SIGINT) || !st.Catches(62) || st.Catches(syscall.SIGTERM) || st.Catches(0) {
		t.Errorf("Catches: SigCgt %x is SIGINT (2), 33 and 62", st.Caught)
	}
	// A kernel thread maps nothing and has no Vm lines.
	if st, err := parseStatus([]byte("Name:\tkthreadd\nState:\tS (sleeping)\n")); st != (Status{}) || err != nil {
		t.Errorf("parseStatus of a kernel thread = %+v, %v", st, err)
	}
	if _, err := parseStatus([]byte("VmData:\t12 MB\n")); err == nil {
		t.Error("parseStatus took a size not in kB")
	}
	if _, err := parseStatus([]byte("SigCgt:\tnope\n")); err == nil {
		t.Error("parseStatus took a SigCgt not in hex")
	}
}

// TestReadStatusFollowsAMapping: VmData grows by what a process maps to
// write, touched or not, which is what RLIMIT_DATA holds it to.
func TestReadStatusFollowsAMapping(t *testing.T) {
	c := start(t, "python3", "-c", `
import mmap, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", flush=True)
signal.sigwait({signal.SIGUSR1})
m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
print("mapped", flush=True)
signal.pause()`)
	c.line(t)
	before, buf, err := ReadStatus(c.pid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(c.pid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	c.line(t)
	after, _, err := ReadStatus(c.pid(), buf)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.Data - before.Data; grew < 64<<20 || grew > 68<<20 || after.Stack == 0 {
		t.Errorf("VmData %d -> %d after mapping 64 MiB untouched (VmStk %d)", before.Data, after.Data, after.Stack)
	}
	if _, _, err := ReadStatus(exitedPID(t), nil); !errors.Is(err, ErrGone) {
		t.Errorf("status of an exited process: %v", err)
	}
}
