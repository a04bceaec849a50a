// Package client is a Jupyter client: it starts kernels from their
// kernelspecs (Launch), connects to them over ZeroMQ (Dial) and runs code
// on them (Execute), the way jupyter_client's KernelManager and
// BlockingKernelClient do.
//
// Shell, control and stdin are DEALER sockets sharing one identity, the
// client's session id, as ipykernel expects: it routes a cell's
// input_request to the identity that sent the cell. iopub is a SUB socket
// subscribed to everything. Every message is signed with the connection
// file's key, and every message received is checked against it.
package client
