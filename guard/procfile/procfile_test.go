package procfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadSeesTheFileNow: each Read renders the file afresh through the
// same descriptor (/proc/self/status shows the RSS the test adds).
func TestReadSeesTheFileNow(t *testing.T) {
	f := New("/proc/self/status")
	defer f.Close()
	first, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	first = bytes.Clone(first)
	fd := f.fd
	hog := make([]byte, 64<<20)
	for i := range hog {
		hog[i] = 1
	}
	again, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if f.fd != fd || bytes.Equal(first, again) || !bytes.Contains(again, []byte("VmRSS:")) {
		t.Errorf("second read through fd %d (first %d) unchanged or not whole:\n%s", f.fd, fd, again)
	}
	_ = hog[len(hog)-1]
}

func TestReadGrowsForLongFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long")
	want := bytes.Repeat([]byte("0123456789"), 1000)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f := New(path)
	defer f.Close()
	got, err := f.Read()
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d bytes (%v), want %d", len(got), err, len(want))
	}
}

func TestAMissingFileIsAnError(t *testing.T) {
	f := New("/proc/no-such-file")
	if _, err := f.Read(); !os.IsNotExist(err) {
		t.Errorf("err = %v, want not exist", err)
	}
}
