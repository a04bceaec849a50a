package sysio

import (
	"os"
	"syscall"
	"testing"
)

// Both ways read the same, and a bad descriptor is an error either way.
func TestPreadEitherWay(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("0123456789"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetRaw(false) })
	for _, on := range []bool{false, true} {
		SetRaw(on)
		buf := make([]byte, 4)
		if n, err := Pread(int(f.Fd()), buf, 3); err != nil || string(buf[:n]) != "3456" {
			t.Errorf("raw %v: Pread = %q, %v", on, buf[:n], err)
		}
		if _, err := Pread(-1, buf, 0); err != syscall.EBADF {
			t.Errorf("raw %v: Pread of fd -1: %v, want EBADF", on, err)
		}
		if _, _, e := Syscall(syscall.SYS_GETPID, 0, 0, 0); e != 0 {
			t.Errorf("raw %v: getpid: %v", on, e)
		}
	}
}
