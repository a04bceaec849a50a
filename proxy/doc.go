// Package proxy is the man in the middle between Jupyter and the real
// kernel: five sockets bound where Jupyter expects the kernel (frontend.go),
// five dialled to the child kernel (kernel.go), a pump per direction that
// forwards every message byte for byte (forward.go), the requests still
// waiting for a reply (inflight.go), and the proxy's own signed messages
// (inject.go).
package proxy
