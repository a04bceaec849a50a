package control

import (
	"errors"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// kernel is a stand-in proxy: the test is about the socket and its API.
type kernel struct{ resumed int }

func (k *kernel) State() State {
	return State{KernelID: "abc", State: "paused", Memory: Memory{Used: 10, Budget: 100, Share: 0.1}}
}
func (k *kernel) Cells() []Cell { return []Cell{{ExecutionCount: 1, Code: "x = 1", GrowthBytes: 5}} }
func (k *kernel) Resume() error { k.resumed++; return nil }
func (k *kernel) History() History {
	return History{Budget: 2, Points: []Point{{At: 1, Kernel: 3, Used: 4}}}
}
func (k *kernel) Interrupt() error { return errors.New("the kernel is restarting") }
func (k *kernel) Restart() error   { return nil }

func serve(t *testing.T) (*Server, string, *kernel) {
	t.Helper()
	dir := t.TempDir()
	path := SocketPath(dir, "abc")
	k := &kernel{}
	s, err := Listen(path, k, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, path, k
}

func TestAPI(t *testing.T) {
	_, path, k := serve(t)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", fi.Mode().Perm(), err)
	}
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.State()
	if err != nil || st.KernelID != "abc" || st.State != "paused" {
		t.Fatalf("state %+v, %v", st, err)
	}
	cells, err := c.Cells()
	if err != nil || len(cells) != 1 || cells[0].Code != "x = 1" {
		t.Fatalf("cells %+v, %v", cells, err)
	}
	h, err := c.History()
	if err != nil || h.Budget != 2 || len(h.Points) != 1 || h.Points[0] != (Point{At: 1, Kernel: 3, Used: 4}) {
		t.Fatalf("history %+v, %v", h, err)
	}
	if _, err := c.Act("resume"); err != nil || k.resumed != 1 {
		t.Fatalf("resume: %v (resumed %d)", err, k.resumed)
	}
	if _, err := c.Act("interrupt"); err == nil || !strings.Contains(err.Error(), "restarting") {
		t.Fatalf("interrupt error %v does not reach the client", err)
	}
}

func TestGarbageGetsAnErrorNotACrash(t *testing.T) {
	_, path, _ := serve(t)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("\x00\x01garbage\r\n\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.Contains(string(answer), "400") {
		t.Fatalf("garbage answered with %q", answer)
	}
	c, _ := Open(path)
	if _, err := c.State(); err != nil {
		t.Fatalf("server gone after garbage: %v", err)
	}
}

func TestRefusesOtherOwnersAndLooseModes(t *testing.T) {
	_, path, _ := serve(t)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("loose mode accepted: %v", err)
	}
	if os.Getuid() != 0 {
		t.Skip("the other-owner checks need root to chown and to act as another uid")
	}
	// SO_PEERCRED: another uid reaches the (now world-writable) socket and is refused.
	// Debian's python: the user's pyenv shims are not readable by nobody.
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		testenv.Missing(t, "no /usr/bin/python3 (Debian's python3) to act as another uid")
	}
	cmd := exec.Command(py, "-c", `import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"GET /v1/state HTTP/1.0\r\n\r\n"); print(s.recv(4096).decode())`, path)
	for d := filepath.Dir(path); d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // let nobody reach the socket, so only SO_PEERCRED stands in the way
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "403") {
		t.Fatalf("another uid was not refused: %v\n%s", err, out)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("socket of another owner accepted: %v", err)
	}
}

func TestStaleSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "guard-dead.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the file stays, as after a SIGKILLed proxy
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.State(); !errors.Is(err, ErrStale) {
		t.Fatalf("dead proxy's socket: %v, want ErrStale", err)
	}
}
