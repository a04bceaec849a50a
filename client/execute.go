package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// ExecuteOptions are the execute_request fields. The zero value is what
// Jupyter sends for a cell run without a person at the keyboard: history
// stored, later requests aborted after an error, input() refused.
type ExecuteOptions struct {
	Silent bool
	// NoHistory sends store_history false: the execution count stays.
	NoHistory bool
	// ContinueOnError sends stop_on_error false: requests queued behind a
	// failing one still run.
	ContinueOnError bool
	UserExpressions map[string]string
	// Input answers the cell's input() and getpass() calls. When nil,
	// allow_stdin is false and the kernel raises an error in the cell
	// instead of waiting for an answer nobody would give.
	Input func(InputRequest) (string, error)
}

// InputRequest is the kernel asking for a line of input.
type InputRequest struct {
	Prompt   string `json:"prompt"`
	Password bool   `json:"password"`
}

// Reply is an execute_reply.
type Reply struct {
	Status         string   `json:"status"` // ok, error or aborted
	ExecutionCount int      `json:"execution_count"`
	Ename          string   `json:"ename"`
	Evalue         string   `json:"evalue"`
	Traceback      []string `json:"traceback"`
	// Content is the whole reply: payload, user_expressions and the rest.
	Content json.RawMessage `json:"-"`
	// Header is the reply's header; its Date is when the kernel replied.
	Header Header `json:"-"`
	// Request is the msg_id of the execute_request, the key under which
	// the kernel's outputs and the guard's ledger know the cell.
	Request string `json:"-"`
}

// Execute runs code and returns once the kernel has both replied and
// published idle for it: only then has all its output arrived, as iopub
// and shell are not ordered with respect to each other. onIOPub, if not
// nil, is called in order with every iopub message the request causes
// (status, execute_input, streams, displays, results, errors, clear_output).
//
// An error reply is not an error of Execute: it is in the Reply. Execute
// fails when the request could not run to its end: ctx ended, the
// connection broke, Input failed (then an empty line was sent to the
// kernel, so that it is not left waiting, and the Reply still returned).
func (c *Client) Execute(ctx context.Context, code string, opts ExecuteOptions, onIOPub func(*Message)) (*Reply, error) {
	expressions := opts.UserExpressions
	if expressions == nil {
		expressions = map[string]string{}
	}
	w, id, err := c.request(wire.Shell, "execute_request", map[string]any{
		"code":             code,
		"silent":           opts.Silent,
		"store_history":    !opts.NoHistory,
		"user_expressions": expressions,
		"allow_stdin":      opts.Input != nil,
		"stop_on_error":    !opts.ContinueOnError,
	})
	if err != nil {
		return nil, err
	}
	defer c.forget(id, w)

	var reply *Reply
	var inputErr error
	for idle := false; reply == nil || !idle; {
		m, err := c.next(ctx, w)
		if err != nil {
			return reply, fmt.Errorf("execute: %w", err)
		}
		switch {
		case m.Channel == wire.IOPub:
			if onIOPub != nil {
				onIOPub(m)
			}
			idle = idle || isIdle(m)
		case m.Channel == wire.Shell && m.Header.Kind == wire.ExecuteReply:
			reply = &Reply{Content: m.Content, Header: m.Header, Request: id}
			if err := m.decodeContent(reply); err != nil {
				return nil, err
			}
		case m.Channel == wire.Stdin && m.Header.Kind == wire.InputRequest:
			if err := c.answer(m, opts.Input); err != nil {
				inputErr = errors.Join(inputErr, err)
			}
		}
	}
	return reply, inputErr
}

// isIdle says whether m is the status message that ends a request.
func isIdle(m *Message) bool {
	if m.Header.Kind != wire.Status {
		return false
	}
	var s struct {
		State string `json:"execution_state"`
	}
	return m.decodeContent(&s) == nil && s.State == "idle"
}

// answer replies to an input_request with what input gives. The kernel
// blocks until it has a reply, so one is always sent: an empty line when
// there is no input function or it fails.
func (c *Client) answer(m *Message, input func(InputRequest) (string, error)) error {
	var req InputRequest
	if err := m.decodeContent(&req); err != nil {
		return err
	}
	var value string
	var inputErr error
	if input == nil {
		inputErr = errors.New("the kernel asked for input, but no input was allowed")
	} else if value, inputErr = input(req); inputErr != nil {
		inputErr = fmt.Errorf("input for prompt %q: %w", req.Prompt, inputErr)
		value = ""
	}
	if err := c.send(wire.Stdin, "input_reply", m.rawHeader, map[string]string{"value": value}); err != nil {
		return errors.Join(inputErr, err)
	}
	return inputErr
}
