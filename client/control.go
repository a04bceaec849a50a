package client

import (
	"context"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Interrupt sends interrupt_request on the control channel and waits for
// the reply: how kernels whose kernelspec says interrupt_mode "message"
// are interrupted. Kernels interrupted by signal need Kernel.Interrupt.
func (c *Client) Interrupt(ctx context.Context) error {
	_, err := c.control(ctx, "interrupt", struct{}{})
	return err
}

// Shutdown asks the kernel to end (or, with restart, to get ready for a
// restart) and waits for its shutdown_reply. It does not wait for the
// process to exit; Kernel.Shutdown does.
func (c *Client) Shutdown(ctx context.Context, restart bool) error {
	_, err := c.control(ctx, "shutdown", map[string]bool{"restart": restart})
	return err
}

// control sends name_request on the control channel and returns the
// name_reply.
func (c *Client) control(ctx context.Context, name string, content any) (*Message, error) {
	msgType := name + "_request"
	w, id, err := c.request(wire.Control, msgType, content)
	if err != nil {
		return nil, err
	}
	defer c.forget(id, w)
	return c.reply(ctx, w, wire.ReplyType(msgType))
}
