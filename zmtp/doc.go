// Package zmtp is the part of ZeroMQ the proxy speaks: ZMTP 3
// (rfc.zeromq.org/spec/23) over tcp and ipc, in clear (NULL) or encrypted
// as Jupyter asks with Curve keys in a connection file (CURVE, curve.go),
// for the four kinds of socket a Jupyter kernel proxy has. Towards the
// frontends it binds a Router (shell, control, stdin, heartbeat) and a Pub
// (iopub); towards its child it dials a Dealer or a Sub (Dial). It sits
// below the packages that use it: kernelspec reads a connection file's
// Curve keys with it, the proxy binds and dials with it, and the client
// dials kernels with it through proxy/transport.
//
// It exists for latency. Behind zmq4's sockets every message crossed two
// goroutines in the proxy (zmq4's reader per connection, then the
// forwarding loop) and a third on iopub (zmq4's PUB writer), each hand-off
// a wake-up on a 2-core machine already busy with the kernel and its
// client. Here the goroutine that reads a message from one connection
// calls the handler, and the handler writes it to the other connection:
// one read and one write per message, nothing in between.
//
// Towards the frontends, each peer has an outbox (outbox.go): the handler
// writes a message itself only if the peer's socket takes it at once;
// otherwise it queues and returns, and the peer's own goroutine writes, so
// a frontend that does not read delays only itself, and past libzmq's
// high-water mark loses only its own messages.
//
// Towards the frontends it also bounds what a peer may make the proxy
// hold before it has shown the kernel's key, which anyone on the machine
// can connect without (limits.go): each socket holds at most 256 peers
// (fewer when the descriptor limit is low: half of what is left at start
// stays the guard's), a newcomer closes the oldest peer that has not yet
// proven itself (a verified message, its identity's on another socket, a
// subscription, a ping), an unproven peer is closed after 30 s unless 32
// or fewer came before it (a KernelManager's control socket stays silent
// for the kernel's life), and until
// a connection has sent a verified message its messages are charged as
// they are announced: 4 KiB of its own, at most 4 MiB from a 16 MiB pool
// its untrusted neighbours share. The socket's owner gives the verdict
// (VerifyingHandler): ZMTP knows nothing of signatures. docs/security.md
// says what that leaves a peer without the key.
//
// What it leaves out, because Jupyter's peers do not need it: the PLAIN
// and GSSAPI mechanisms, ZAP (a CURVE server takes any client key, as a
// kernel's does), ZMTP 1 and 2 peers, and reconnecting (the proxy dials a
// new child with new sockets).
package zmtp
