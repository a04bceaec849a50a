package zmtp

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// RemoveStaleSocket deletes a unix socket file that nobody accepts on any
// more, as libzmq does before binding an ipc endpoint. A kernel killed on
// restart leaves its socket files behind and Jupyter reuses the same paths
// for the next one, so without this the restarted proxy could not listen
// (zmq4's own ipc fails with "address already in use").
//
// Unlike libzmq it leaves a live socket alone, so Listen fails instead of
// stealing another process's endpoint; finding out costs that process one
// connection that closes at once. Anything that is not a socket is left
// for Listen to report.
func RemoveStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSocket == 0 {
		return nil
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		// Someone is listening; its error on close is of no interest.
		_ = c.Close()
		return nil
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
