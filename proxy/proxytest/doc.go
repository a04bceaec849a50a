// Package proxytest runs the proxy (package proxy) in a test's process
// between a fake kernel and the test's frontends and attackers, all of
// them speaking ZMTP through the project's own zmtp, so the proxy's
// tests need no Python stack and run in milliseconds:
//
//   - Kernel (kernel.go) is the child side: a ROUTER for shell, control
//     and stdin, a PUB for iopub and an echo for hb, which verify what
//     comes and answer what a frontend waits for (kernel_info, execute,
//     any other request), and record the comm messages they get.
//   - Proxy (proxy.go) is package proxy listening where frontends connect,
//     attached to a Kernel, with hooks that pass everything and a log the
//     test can read.
//   - Frontends are the project's own client (package client) dialled to
//     the Proxy; attackers are zmtp.RawConn, which shake hands as the
//     package does and then send whatever a test gives them.
//   - RSS and ResetPeak (memory.go) measure the process, for the bounds on
//     what peers may make the proxy hold.
package proxytest
