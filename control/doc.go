// Package control is each proxy's control socket: a small JSON API, HTTP
// over a unix socket next to the kernel's connection file, through which
// guardctl reads a kernel's state and ledger and asks it to resume,
// interrupt or restart. Only the socket owner's uid is served.
package control
