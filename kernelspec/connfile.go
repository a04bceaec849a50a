package kernelspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// ConnectionInfo is a Jupyter connection file: where a kernel's five
// channels listen, how its messages are signed, and, when Jupyter asks for
// transport encryption (jupyter_client 8.9+), the kernel's CurveZMQ keys.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	StdinPort       int    `json:"stdin_port"`
	IOPubPort       int    `json:"iopub_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name,omitempty"`
	// The kernel's CurveZMQ key pair in Z85, as jupyter_client writes it;
	// its clients take it as theirs too (see zmtp.ParseCurve).
	CurvePublicKey string `json:"curve_publickey,omitempty"`
	CurveSecretKey string `json:"curve_secretkey,omitempty"`
}

// ReadConnectionFile reads and checks a connection file written by Jupyter.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var ci ConnectionInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return ci, fmt.Errorf("connection file: %w", err)
	}
	if err := json.Unmarshal(data, &ci); err != nil {
		return ci, fmt.Errorf("connection file %s: %w", path, err)
	}
	if ci.Transport == "" {
		ci.Transport = "tcp"
	}
	if ci.SignatureScheme == "" {
		ci.SignatureScheme = "hmac-sha256"
	}
	if ci.Transport != "tcp" && ci.Transport != "ipc" {
		return ci, fmt.Errorf("connection file %s: transport %q is not tcp or ipc", path, ci.Transport)
	}
	if ci.SignatureScheme != "hmac-sha256" {
		return ci, fmt.Errorf("connection file %s: signature_scheme %q is not supported (only hmac-sha256)", path, ci.SignatureScheme)
	}
	// Keys that cannot be used stop the kernel here: Jupyter asked for
	// encryption, and the kernel must never answer in clear instead.
	if _, err := ci.Curve(); err != nil {
		return ci, fmt.Errorf("connection file %s: %w; not starting the kernel in clear when Jupyter asked for encryption", path, err)
	}
	return ci, nil
}

// Curve is the kernel's CurveZMQ keys, or nil when Jupyter gave none. One
// key without the other is an error, not a kernel in clear.
func (ci ConnectionInfo) Curve() (*zmtp.Curve, error) {
	if ci.CurvePublicKey == "" && ci.CurveSecretKey == "" {
		return nil, nil
	}
	return zmtp.ParseCurve(ci.CurvePublicKey, ci.CurveSecretKey)
}

// Encode is the connection file's text, as jupyter_client writes it.
func (ci ConnectionInfo) Encode() ([]byte, error) {
	return json.MarshalIndent(ci, "", "  ")
}

// Write creates the connection file at path, readable by its owner only, as
// jupyter_core's secure_write does: whatever is at path is removed first,
// and the file is made anew (O_EXCL, O_NOFOLLOW), so a file or symlink
// someone planted there, in a runtime dir others can write, never gets the
// key.
func (ci ConnectionInfo) Write(path string) error {
	data, err := ci.Encode()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("connection file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("connection file: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("connection file %s: %w", path, err)
	}
	return nil
}

// Endpoint returns the ZeroMQ endpoint of one port, e.g. tcp://127.0.0.1:5555;
// for the ipc transport Jupyter names the socket file ip-port.
func (ci ConnectionInfo) Endpoint(port int) string {
	if ci.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", ci.IP, port)
	}
	return fmt.Sprintf("tcp://%s:%d", ci.IP, port)
}

// Ports are the connection file's ports in the order shell, control,
// stdin, iopub, hb: indexed by wire.Channel.
func (ci ConnectionInfo) Ports() [5]int {
	return [5]int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort, ci.HBPort}
}
