package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SocketPattern names control sockets in the runtime dir.
const SocketPattern = "guard-*.sock"

// SocketPath is the control socket of a kernel, in Jupyter's runtime dir.
func SocketPath(runtimeDir, kernelID string) string {
	return filepath.Join(runtimeDir, "guard-"+kernelID+".sock")
}

// KernelID is the id in a Jupyter connection file's name, kernel-<id>.json
// (or the whole name without .json, for files named otherwise).
func KernelID(connFile string) string {
	base := strings.TrimSuffix(filepath.Base(connFile), ".json")
	return strings.TrimPrefix(base, "kernel-")
}

// Conn talks to one proxy.
type Conn struct {
	Path string
	http *http.Client
}

// ErrStale marks a socket whose proxy is gone.
var ErrStale = errors.New("no proxy behind this socket")

// Open checks that path is a socket owned by us with mode 0600 and returns
// a client for it. A socket that someone else could have planted is refused.
func Open(path string) (*Conn, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSocket == 0:
		return nil, fmt.Errorf("%s is not a socket", path)
	case !ok || int(st.Uid) != os.Getuid():
		return nil, fmt.Errorf("%s belongs to another user: refused", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s has mode %v, others could use it: refused", path, fi.Mode().Perm())
	}
	return &Conn{Path: path, http: &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}},
	}}, nil
}

// State reads the kernel's state.
func (c *Conn) State() (State, error) {
	var s State
	return s, c.do(http.MethodGet, "/v1/state", &s)
}

// Cells reads the kernel's ledger.
func (c *Conn) Cells() ([]Cell, error) {
	var cells []Cell
	return cells, c.do(http.MethodGet, "/v1/cells", &cells)
}

// History reads the kernel's memory over the last minutes.
func (c *Conn) History() (History, error) {
	var h History
	return h, c.do(http.MethodGet, "/v1/history", &h)
}

// Act asks the kernel to "resume", "interrupt" or "restart".
func (c *Conn) Act(action string) (State, error) {
	var s State
	return s, c.do(http.MethodPost, "/v1/"+action, &s)
}

func (c *Conn) do(method, path string, out any) error {
	req, err := http.NewRequest(method, "http://guard"+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return ErrStale
		}
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("answer from %s is not what guardctl expects: %w", c.Path, err)
	}
	return nil
}
