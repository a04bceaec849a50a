// Package proxy is the man in the middle between Jupyter and the real
// kernel: five sockets bound where Jupyter expects the kernel (frontend.go),
// four dialled to the child kernel (package transport), the handlers that
// forward each message on the goroutine that read it, its frames as they
// came, routed by the one msg_type table (wire/route.go) (forward.go; the
// kernel's own "starting" and its greeting of the proxy's subscription
// stay with the proxy, and a reply the kernel sent without the request's
// identity frames gets them back), the kernel's iopub kept in order while
// a cell's idle waits for what goes before it (held.go), the one record of
// each request in flight (requests.go), and the proxy's own signed
// messages (inject.go). The sockets speak ZMTP through package zmtp.
package proxy
