package supervisor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// sunPathMax is the longest path a unix socket can be bound at on Linux:
// sun_path holds 108 bytes, the terminating NUL included.
const sunPathMax = 107

// The child's sockets are sockDir/k-1 … sockDir/k-5, named as Jupyter names
// ipc endpoints (ip-port) with ip sockDir/k and ports 1 to 5; an ipykernel's
// IOPub pipe is sockDir/pipe.
const (
	sockPrefix   = "k"
	sockLastPort = 5
	pipeName     = "pipe"
)

// sockPath is the socket of port in dir, as Jupyter names an ipc endpoint.
func sockPath(dir string, port int) string {
	return fmt.Sprintf("%s-%d", filepath.Join(dir, sockPrefix), port)
}

// privDirName names the proxy's private directory for its child's sockets:
// the same for the same connection file and key, so that a proxy Jupyter
// restarts (it keeps the connection file) takes back the directory of the
// one before, yet not to be guessed by whoever sees the connection file's
// path (it is in the proxy's argv), so nobody can plant it in a shared
// /tmp ahead of time. Short, for the socket paths (see privDirPath).
func privDirName(key, connFile string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(connFile))
	return "jg-" + hex.EncodeToString(mac.Sum(nil))[:10]
}

// privDirPath is where that directory goes: os.TempDir() first, as the
// shortest path at hand. sun_path allows 107 bytes, but xeus-python 0.19
// reads each bound endpoint back (ZMQ_LAST_ENDPOINT) into 32 bytes and
// fails to start ("RuntimeError: Invalid argument") when "ipc://", the path
// and its NUL do not fit: 25 bytes of path at most. /tmp/jg-0123456789/k-5
// is 22.
// Then $XDG_RUNTIME_DIR and Jupyter's runtime dir, where the paths must
// fit in sun_path. A parent that others may write without the sticky bit is
// passed over: there they could swap the directory under the child.
func privDirPath(runtimeDir, key, connFile string) (string, error) {
	name := privDirName(key, connFile)
	var tried []string
	for _, base := range privBases(runtimeDir) {
		tried = append(tried, base)
		dir := filepath.Join(base, name)
		longest := max(len(sockPath(dir, sockLastPort)), len(filepath.Join(dir, pipeName)))
		if longest > sunPathMax || !closedToOthers(base) {
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("no place for the kernel's unix sockets: each of %q is too long for a socket path (%d bytes at most) or writable by others", tried, sunPathMax)
}

// privBases are where privDirPath may put the private directories, in its
// order of preference.
func privBases(runtimeDir string) []string {
	var bases []string
	for _, base := range []string{os.TempDir(), os.Getenv("XDG_RUNTIME_DIR"), runtimeDir} {
		if base != "" && filepath.IsAbs(base) {
			bases = append(bases, base)
		}
	}
	return bases
}

// SweepLeftovers removes the private directories (with the child's
// connection file and its key) that proxies killed with SIGKILL left
// behind, wherever they may be: guardctl status calls it, so that they go
// even when no other kernel starts.
func SweepLeftovers(runtimeDir string) {
	for _, base := range privBases(runtimeDir) {
		sweepPrivDirs(base, "")
	}
}

// closedToOthers reports whether only its owner (or, with the sticky bit,
// nobody but an entry's owner) can rename or remove entries of dir.
func closedToOthers(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	return fi.Mode().Perm()&0o022 == 0 || fi.Mode()&fs.ModeSticky != 0
}

// openPrivDir makes dir with mode 0700, or takes it back when an earlier
// proxy of this kernel left it. One that is a symlink, someone else's or
// open to others is refused, never followed: whoever planted it could
// listen where the proxy dials its child, or read what the child binds.
// errTaken if it went once made (or found): another proxy's sweep took it.
func openPrivDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err == nil {
		// The umask may have taken bits off; the check below wants exactly 0700.
		if err := os.Chmod(dir, 0o700); err != nil {
			return gone(err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("the kernel's socket directory: %w", err)
	}
	return checkPrivDir(dir)
}

// errTaken: the directory vanished between two steps of taking it, or
// another proxy holds it. Until a proxy holds its lock, another proxy's
// sweep (sweepPrivDirs) may take it for one a killed proxy left.
var errTaken = errors.New("gone, or held by another proxy")

// gone is err with context, marked errTaken if it says the directory is
// not there.
func gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the kernel's socket directory: %w: %w", errTaken, err)
	}
	return fmt.Errorf("the kernel's socket directory: %w", err)
}

// checkPrivDir refuses dir unless it is a directory of this user's with
// mode 0700.
func checkPrivDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return gone(err)
	}
	refuse := func(why string, args ...any) error {
		return fmt.Errorf("refusing the kernel's socket directory %s: it %s; the kernel is not started", dir, fmt.Sprintf(why, args...))
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse("is a symlink (not followed)")
	case !fi.IsDir():
		return refuse("is not a directory")
	case int(st.Uid) != os.Getuid():
		return refuse("is owned by uid %d, not by this user (uid %d)", st.Uid, os.Getuid())
	case fi.Mode().Perm() != 0o700:
		return refuse("has mode %04o, not 0700", fi.Mode().Perm())
	}
	return nil
}

// lockPrivDir opens dir (openPrivDir) and holds a lock on it until the
// returned file is closed, for as long as the proxy lives: Linux drops the
// lock of a proxy killed with SIGKILL, which is how the next proxy's
// sweep (sweepPrivDirs) tells a directory left behind from one in use.
func lockPrivDir(dir string) (*os.File, error) {
	for tries := 0; ; tries++ {
		f, err := takePrivDir(dir)
		if !errors.Is(err, errTaken) {
			return f, err
		}
		if tries == 100 {
			return nil, fmt.Errorf("%w, at every try for a second (does another proxy run this kernel?)", err)
		}
		// Another proxy's sweep holds it for a moment, or has removed it:
		// make it anew.
		time.Sleep(10 * time.Millisecond)
	}
}

// takePrivDir is one try of lockPrivDir: errTaken if another proxy
// holds the directory or took it meanwhile.
func takePrivDir(dir string) (*os.File, error) {
	if err := openPrivDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, gone(err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil && isOpenAt(f, dir) {
		return f, nil
	}
	f.Close()
	switch {
	case err == nil:
		return nil, fmt.Errorf("the kernel's socket directory %s: %w: replaced before it was locked", dir, errTaken)
	case errors.Is(err, syscall.EWOULDBLOCK):
		return nil, fmt.Errorf("the kernel's socket directory %s: %w: %w", dir, errTaken, err)
	}
	return nil, fmt.Errorf("the kernel's socket directory %s: cannot lock it: %w", dir, err)
}

// isOpenAt reports whether f is still the directory at path.
func isOpenAt(f *os.File, path string) bool {
	open, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(open, now)
}

// privDirPattern is what privDirName makes.
var privDirPattern = regexp.MustCompile(`^jg-[0-9a-f]{10}$`)

// sweepPrivDirs removes, from base, the socket directories of proxies that
// were killed with SIGKILL (jupyter_client's shutdown_kernel(now=True)
// does): this user's, 0700, named as privDirName names them, and locked
// by no one. keep, the caller's own, is left alone.
func sweepPrivDirs(base, keep string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(base, e.Name())
		if path == keep || !privDirPattern.MatchString(e.Name()) || checkPrivDir(path) != nil {
			continue
		}
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && isOpenAt(f, path) {
			os.RemoveAll(path)
		}
		f.Close()
	}
}
