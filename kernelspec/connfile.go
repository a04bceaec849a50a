package kernelspec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ConnectionInfo is a Jupyter connection file: where a kernel's five
// channels listen and how its messages are signed.
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
	return ci, nil
}

// Write writes the connection file with mode 0600, as it holds the signing key.
func (ci ConnectionInfo) Write(path string) error {
	data, err := json.MarshalIndent(ci, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("connection file: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("connection file: %w", err)
	}
	return os.Rename(tmp, path)
}

// Endpoint returns the ZeroMQ endpoint of one port, e.g. tcp://127.0.0.1:5555;
// for the ipc transport Jupyter names the socket file ip-port.
func (ci ConnectionInfo) Endpoint(port int) string {
	if ci.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", ci.IP, port)
	}
	return fmt.Sprintf("tcp://%s:%d", ci.IP, port)
}
