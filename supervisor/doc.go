// Package supervisor runs one guarded kernel: it owns the proxy and the
// child kernel process, starts and restarts the child, turns interrupts and
// shutdowns into what the wrapped kernel understands, and closes every
// request a dead kernel left open.
package supervisor
