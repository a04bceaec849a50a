package supervisor

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

func TestSockDirName(t *testing.T) {
	a := privDirName("key", "/run/kernel-1.json")
	if a != privDirName("key", "/run/kernel-1.json") {
		t.Error("the same connection file and key must give the same directory, for Jupyter's restarts")
	}
	for _, other := range []string{privDirName("key", "/run/kernel-2.json"), privDirName("other key", "/run/kernel-1.json")} {
		if other == a {
			t.Errorf("%s for two kernels", a)
		}
	}
}

func TestSockDirPathIsShortWhereTheTempDirIs(t *testing.T) {
	t.Setenv("TMPDIR", "/tmp")
	dir, err := privDirPath("/nonexistent/runtime", "key", "/c.json")
	if err != nil {
		t.Fatal(err)
	}
	// xeus-python 0.19 takes socket paths of 25 bytes at most.
	if got := sockPath(dir, sockLastPort); filepath.Dir(dir) != "/tmp" || len(got) > 25 {
		t.Errorf("%s: %d bytes", got, len(got))
	}
}

func TestSockDirPathPassesOverTooLongAndOpenParents(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 100))
	open := filepath.Join(t.TempDir(), "open")
	private := t.TempDir()
	for _, d := range []string{long, open} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil { // writable by all, no sticky bit
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	t.Setenv("XDG_RUNTIME_DIR", open)
	dir, err := privDirPath(private, "key", "/c.json")
	if err != nil || filepath.Dir(dir) != private {
		t.Errorf("got %q, %v; want a directory in %s", dir, err, private)
	}
	if _, err := privDirPath(long, "key", "/c.json"); err == nil {
		t.Error("no place fits: want an error")
	}
}

func TestOpenSockDir(t *testing.T) {
	base := t.TempDir()
	old := syscall.Umask(0o277) // takes the owner's write bit: the directory must be 0700 anyway
	dir := filepath.Join(base, "jg-new")
	err := openPrivDir(dir)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want mode 0700", fi.Mode(), err)
	}
	if err := openPrivDir(dir); err != nil {
		t.Errorf("taking back our own directory: %v", err)
	}

	target := t.TempDir()
	planted := map[string]func(path string) error{
		"is a symlink (not followed)": func(p string) error { return os.Symlink(target, p) },
		"has mode 0755, not 0700":     func(p string) error { return os.Mkdir(p, 0o755) },
		"is not a directory":          func(p string) error { return os.WriteFile(p, nil, 0o600) },
	}
	if os.Getuid() == 0 {
		planted["is owned by uid 65534"] = func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}
	}
	for why, plant := range planted {
		p := filepath.Join(base, strings.Fields(why)[1])
		if err := plant(p); err != nil {
			t.Fatal(err)
		}
		err := openPrivDir(p)
		if err == nil || !strings.Contains(err.Error(), "refusing the kernel's socket directory "+p+": it "+why) {
			t.Errorf("%s: got %v", why, err)
		}
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("something was written through the symlink: %v", entries)
	}
}

func TestChildConnectionOnUnixSockets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jg-test")
	if err := openPrivDir(dir); err != nil {
		t.Fatal(err)
	}
	// A socket the last child left, still open in a process it left behind.
	ln, err := net.Listen("unix", sockPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	front := kernelspec.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: 5000, Key: "k", SignatureScheme: "hmac-sha256"}
	connFile := filepath.Join(t.TempDir(), "child.json")
	ci, err := childConnection(front, connFile, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ci.Transport != "ipc" || ci.Endpoint(ci.ShellPort) != "ipc://"+sockPath(dir, 1) || ci.Key != "k" {
		t.Errorf("got %+v", ci)
	}
	if _, err := os.Lstat(sockPath(dir, 1)); !os.IsNotExist(err) {
		t.Errorf("the last child's socket is still there: %v", err)
	}
	if written, err := kernelspec.ReadConnectionFile(connFile); err != nil || written != ci {
		t.Errorf("wrote %+v, %v; want %+v", written, err, ci)
	}
}

func TestSweepSockDirs(t *testing.T) {
	base := t.TempDir()
	mkdir := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	left := mkdir("jg-0000000001", 0o700)    // a SIGKILLed proxy's
	notOurs := mkdir("jg-0000000002", 0o755) // not made by a proxy
	other := mkdir("jg-other", 0o700)
	keep := mkdir("jg-0000000003", 0o700) // the caller's own
	live := filepath.Join(base, "jg-0000000004")
	lock, err := lockPrivDir(live) // a running proxy's
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()

	sweepPrivDirs(base, keep)
	for p, want := range map[string]bool{left: false, notOurs: true, other: true, keep: true, live: true} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if _, err := lockPrivDir(live); err == nil {
		t.Error("a second proxy locked a directory in use")
	}
	lock.Close()
	sweepPrivDirs(base, keep)
	if _, err := os.Lstat(live); err == nil {
		t.Error("a directory whose proxy is gone was kept")
	}
}

// Proxies starting side by side: each sweeps the others' directories
// while they are being made. One made but not yet locked must not be
// lost to another's sweep (a guardctl run's kernel failed to start with
// "chmod /tmp/jg-…: no such file or directory" in CI, 2026-11-28).
func TestTakingADirectoryWhileOthersSweep(t *testing.T) {
	base := t.TempDir()
	stop := make(chan struct{})
	var sweepers, takers sync.WaitGroup
	for range 4 {
		sweepers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					sweepPrivDirs(base, "")
				}
			}
		})
	}
	for p := range 4 {
		takers.Go(func() {
			for i := range 500 {
				lock, err := lockPrivDir(filepath.Join(base, privDirName("key", fmt.Sprint(p, i))))
				if err != nil {
					t.Errorf("proxy %d, start %d: %v", p, i, err)
					return
				}
				lock.Close()
			}
		})
	}
	takers.Wait()
	close(stop)
	sweepers.Wait()
}
