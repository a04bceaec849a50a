package client

import (
	"context"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Request sends a request of msgType ("usage_request") on ch and returns
// its reply, for the requests the client has no method of its own for.
func (c *Client) Request(ctx context.Context, ch wire.Channel, msgType string, content any) (*Message, error) {
	w, id, err := c.request(ch, msgType, content)
	if err != nil {
		return nil, err
	}
	defer c.forget(id, w)
	return c.reply(ctx, w, wire.ReplyType(msgType))
}

// Send sends a message of msgType on ch that gets no reply (comm_msg),
// with buffers after its JSON frames, and returns once it is written.
func (c *Client) Send(ch wire.Channel, msgType string, content any, buffers [][]byte) error {
	m, _, err := c.build(msgType, nil, content)
	if err != nil {
		return err
	}
	m.Buffers = buffers
	return c.transmit(ch, m, msgType)
}
