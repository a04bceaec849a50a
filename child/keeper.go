package child

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// TreeMarker is set in the kernel's environment: every process of its tree
// inherits it, also one that left the kernel's process group or session,
// or was orphaned and adopted by init. The keeper finds them by it.
const TreeMarker = "JUPYTER_GUARD_TREE"

// Keeper is a process that outlives the proxy to end what the kernel left
// running. The kernel's parent-death signal ends the kernel when the proxy
// dies, even of SIGKILL, but not its children: a multiprocessing worker or
// a job is adopted by init and keeps its memory, and one the guard had
// paused stays stopped for good. Neither a subreaper (the proxy itself
// would be the one to die) nor a cgroup of the kernel's own (not every
// machine delegates one) holds everywhere; a watcher process does.
type Keeper struct {
	// Env marks the kernel's tree: add it to the kernel's environment.
	Env string
	w   *os.File
}

// StartKeeper starts the keeper: argv runs this program's keeper command,
// which gets the marker as its last argument and the read end of a pipe as
// fd 3, and hands both on to a detached copy of itself (Detach). The proxy
// holds the write end; when it closes, for whatever reason the proxy ends,
// the keeper sweeps.
func StartKeeper(argv []string) (*Keeper, error) {
	token := make([]byte, 8)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	marker := TreeMarker + "=" + hex.EncodeToString(token)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd, err := startWithPipe(append(argv, marker), r)
	if err == nil {
		// The first stage ends as soon as it has started the second: reaped
		// now, before the kernel starts, it is never seen as a second
		// child of the proxy.
		err = cmd.Wait()
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start the keeper that ends the kernel's processes with the proxy: %w", err)
	}
	return &Keeper{Env: marker, w: w}, nil
}

// Detach runs the keeper again as argv, with the pipe, and returns once it
// has started: the copy is then no child of the proxy, which keeps the
// kernel its only child (tools and Jupyter look for it there), and it has a
// session of its own, so that a signal to the proxy's process group or a
// hangup of its terminal does not end it before it has swept.
func Detach(argv []string, proxy *os.File) error {
	_, err := startWithPipe(argv, proxy) // it outlives this first stage, which ends now
	return err
}

func startWithPipe(argv []string, pipe *os.File) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{pipe}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}

// Close lets the keeper sweep now: the proxy is ending.
func (k *Keeper) Close() error { return k.w.Close() }

// Keep is the keeper's life: it waits until the proxy's end of fd 3 is
// closed, then ends every process marked with marker ("NAME=value").
func Keep(proxy io.Reader, marker string) (killed int, err error) {
	// Nothing is ever written: the read returns when the proxy is gone.
	_, err = proxy.Read(make([]byte, 1))
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("keeper: waiting for the proxy: %w", err)
	}
	return Sweep("/proc", marker), nil
}

// sweepRounds bounds the sweep: a process may fork while it is being
// killed, so the sweep looks again until a look finds none.
const sweepRounds = 50

// Sweep kills with SIGKILL (which also ends a stopped process) every
// process under procDir whose environment holds marker, and returns how
// many it killed.
func Sweep(procDir, marker string) int {
	killed := map[int]bool{}
	for range sweepRounds {
		found := marked(procDir, marker)
		if len(found) == 0 {
			break
		}
		for _, pid := range found {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return len(killed)
}

// marked lists the processes whose environment holds marker. A zombie has
// an empty environ and is not listed: it is dead already.
func marked(procDir, marker string) []int {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	want := append([]byte(marker), 0)
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(procDir, e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read, so not ours to kill
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
