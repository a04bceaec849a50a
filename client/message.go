package client

import (
	"encoding/json"
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Header is a message header (or parent_header) as the kernel sent it.
type Header struct {
	MsgID    string    `json:"msg_id"`
	MsgType  string    `json:"msg_type"`
	Session  string    `json:"session"`
	Username string    `json:"username"`
	Date     string    `json:"date"`
	Version  string    `json:"version"`
	Kind     wire.Kind `json:"-"` // MsgType, classified
}

// Message is one message received from the kernel, verified and with its
// headers decoded; content and metadata are left for the receiver.
type Message struct {
	Channel  wire.Channel
	Header   Header
	Parent   Header
	Metadata json.RawMessage
	Content  json.RawMessage
	Buffers  [][]byte

	rawHeader []byte // to answer this message with it as the parent
}

// decode checks the signature of frames received on ch and decodes them.
func decode(ch wire.Channel, frames [][]byte, signer *wire.Signer) (*Message, error) {
	w, err := wire.Parse(frames)
	if err != nil {
		return nil, fmt.Errorf("%s channel: not a Jupyter message: %w", ch, err)
	}
	if err := signer.Verify(w); err != nil {
		return nil, fmt.Errorf("%s channel: a message with a bad signature arrived: "+
			"the kernel does not sign with the connection file's key", ch)
	}
	m := &Message{
		Channel:   ch,
		Metadata:  w.Metadata,
		Content:   w.Content,
		Buffers:   w.Buffers,
		rawHeader: w.Header,
	}
	if err := json.Unmarshal(w.Header, &m.Header); err != nil {
		return nil, fmt.Errorf("%s channel: message header is not JSON: %w", ch, err)
	}
	if err := json.Unmarshal(w.Parent, &m.Parent); err != nil {
		return nil, fmt.Errorf("%s channel: %s parent_header is not JSON: %w", ch, m.Header.MsgType, err)
	}
	m.Header.Kind, m.Parent.Kind = wire.KindOf(m.Header.MsgType), wire.KindOf(m.Parent.MsgType)
	return m, nil
}

// decodeContent unmarshals m's content into v, naming the message on error.
func (m *Message) decodeContent(v any) error {
	if err := json.Unmarshal(m.Content, v); err != nil {
		return fmt.Errorf("%s %s: content: %w", m.Channel, m.Header.MsgType, err)
	}
	return nil
}
