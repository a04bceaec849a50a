package wire

import (
	"encoding/json"
	"fmt"
)

// Header holds the header fields the proxy routes on. Decoding into it reads
// only these fields; the bytes on the wire stay as they were.
type Header struct {
	MsgID   string `json:"msg_id"`
	MsgType string `json:"msg_type"`
	Session string `json:"session"`
}

// DecodeHeader reads the routing fields of a header or parent_header frame.
// An empty parent ("{}") gives a zero Header.
func DecodeHeader(frame []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(frame, &h); err != nil {
		return h, fmt.Errorf("header is not JSON: %w", err)
	}
	return h, nil
}
