// Package transport gives zmq4 the socket I/O a Jupyter client needs to
// keep up with a kernel, and dials a kernel's four channels (DialKernel).
// The project's own client (package client, guardctl run) uses it; the
// proxy itself speaks ZMTP through package zmtp, without zmq4's sockets.
//
// zmq4 v0.17.0 writes every ZMTP frame as two unbuffered writes (header,
// then body) and reads each header and each body with its own read, so a
// 6-frame Jupyter message costs 12 write and 12 read syscalls. This
// package registers two zmq4 transports, tcpb:// and ipcb://, that are
// zmq4's own tcp and ipc with each connection wrapped: reads go through a
// 64 KiB bufio.Reader, and writes through a writer that follows the ZMTP
// framing and hands the socket one write per message. The greeting and
// each command are flushed too, so the handshake never waits. A body that
// does not fit the 64 KiB buffer goes out uncopied in the same writev as
// what is buffered, so a connection never holds more than 128 KiB.
//
// Endpoint turns a connection file's "tcp://ip:port" or "ipc://path" into
// the buffered form for Socket.Listen and Socket.Dial; importing the
// package registers the schemes. ipcb, like libzmq and unlike zmq4's ipc,
// replaces a stale socket file left by a killed process before listening.
//
// Measured on the 2-core development machine (shared, so noisy), for a
// Jupyter execute_request DEALER → ROUTER → DEALER round trip in one
// process, benchstat over 10 interleaved runs:
//
//	tcp  45.8 µs ± 19% → 14.6 µs ± 7%  (−68%)
//	ipc  24.6 µs ±  5% → 12.6 µs ± 19% (−49%)
//
// strace counts per message drop from 12 writes + 12 reads to 1 write +
// 1 read (plus, in both cases, the read that finds the socket empty before
// Go's netpoller parks). Allocations are unchanged at 73 per round trip,
// all zmq4's own. Streaming 1 MB messages shows no significant difference
// (3–5 GiB/s either way, p > 0.1); the syscalls per message go from
// 2.3 writes + 3 reads to 1.3 writevs + 2 reads.
package transport
