package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// nudgeInterval is how long Dial waits for an iopub message after a
// kernel_info_reply before asking again; each request makes the kernel
// publish busy and idle, which a subscription that has meanwhile reached
// the kernel receives.
const nudgeInterval = 200 * time.Millisecond

// KernelInfo is a kernel_info_reply.
type KernelInfo struct {
	Status                string          `json:"status"`
	ProtocolVersion       string          `json:"protocol_version"`
	Implementation        string          `json:"implementation"`
	ImplementationVersion string          `json:"implementation_version"`
	Banner                string          `json:"banner"`
	LanguageInfo          json.RawMessage `json:"language_info"`
	// Content is the whole reply, fields not modelled above included.
	Content json.RawMessage `json:"-"`
}

// KernelInfo asks the kernel who it is.
func (c *Client) KernelInfo(ctx context.Context) (*KernelInfo, error) {
	w, id, err := c.request(wire.Shell, "kernel_info_request", struct{}{})
	if err != nil {
		return nil, err
	}
	defer c.forget(id, w)
	m, err := c.reply(ctx, w, "kernel_info_reply")
	if err != nil {
		return nil, err
	}
	info := &KernelInfo{Content: m.Content}
	if err := m.decodeContent(info); err != nil {
		return nil, err
	}
	return info, nil
}

// nudge repeats kernel_info_request until the kernel has answered one and
// an iopub message has arrived, so no output of the first cell is lost.
func (c *Client) nudge(ctx context.Context) error {
	for {
		if _, err := c.KernelInfo(ctx); err != nil {
			return fmt.Errorf("the kernel does not answer: %w", err)
		}
		select {
		case <-c.iopubSeen:
			return nil
		case <-time.After(nudgeInterval):
		case <-ctx.Done():
			return fmt.Errorf("no message from the kernel's iopub channel: %w", context.Cause(ctx))
		}
	}
}
