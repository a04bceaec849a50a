package client

import (
	"fmt"
	"net"

	"github.com/google/uuid"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// newConnection picks five free loopback ports and a fresh key, as
// jupyter_client does: all five are bound at once, so they differ, then
// released for the kernel to bind. Another process may take one in
// between (jupyter_client#154); the kernel then fails to start, and says
// so.
func newConnection(kernelName string) (kernelspec.ConnectionInfo, error) {
	ci := kernelspec.ConnectionInfo{
		Transport:       "tcp",
		IP:              "127.0.0.1",
		Key:             uuid.NewString(),
		SignatureScheme: "hmac-sha256",
		KernelName:      kernelName,
	}
	ports := []*int{&ci.ShellPort, &ci.ControlPort, &ci.StdinPort, &ci.IOPubPort, &ci.HBPort}
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ci, fmt.Errorf("find a free port for the kernel: %w", err)
		}
		defer l.Close()
		*port = l.Addr().(*net.TCPAddr).Port
	}
	return ci, nil
}
