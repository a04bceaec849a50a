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
		if _, e := Syscall(syscall.SYS_GETPID, 0, 0, 0); e != 0 {
			t.Errorf("raw %v: getpid: %v", on, e)
		}
	}
}

// Both ways open, list and close a directory, and a missing path is
// ENOENT either way.
func TestOpenReadDirentCloseEitherWay(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/children", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetRaw(false) })
	for _, on := range []bool{false, true} {
		SetRaw(on)
		fd, err := Open(dir)
		if err != nil {
			t.Fatalf("raw %v: Open: %v", on, err)
		}
		buf := make([]byte, 4096)
		n, err := ReadDirent(fd, buf)
		if err != nil {
			t.Fatalf("raw %v: ReadDirent: %v", on, err)
		}
		_, _, names := syscall.ParseDirent(buf[:n], -1, nil)
		if len(names) != 1 || names[0] != "children" {
			t.Errorf("raw %v: listed %q, want [children]", on, names)
		}
		if err := Close(fd); err != nil {
			t.Errorf("raw %v: Close: %v", on, err)
		}
		if err := Close(fd); err != syscall.EBADF {
			t.Errorf("raw %v: second Close: %v, want EBADF", on, err)
		}
		if _, err := Open(dir + "/missing"); err != syscall.ENOENT {
			t.Errorf("raw %v: Open of a missing file: %v, want ENOENT", on, err)
		}
	}
}
