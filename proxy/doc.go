// Package proxy is the man in the middle between Jupyter and the real
// kernel: five sockets bound where Jupyter expects the kernel (frontend.go),
// four dialled to the child kernel (kernel.go), the handlers that forward
// every message byte for byte, each on the goroutine that read it
// (forward.go), the requests still waiting for a reply (inflight.go), and
// the proxy's own signed messages (inject.go). The sockets speak ZMTP
// through package zmtp.
package proxy
