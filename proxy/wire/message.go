package wire

import (
	"bytes"
	"errors"
	"fmt"
)

// Delimiter separates routing identities from the signed part of a message.
var Delimiter = []byte("<IDS|MSG>")

// Message is one Jupyter message as frames. Its slices alias the frames it
// was parsed from.
type Message struct {
	// Idents are the frames before the delimiter: ROUTER identities on
	// shell, control and stdin; the topic on iopub.
	Idents    [][]byte
	Signature []byte
	Header    []byte
	Parent    []byte
	Metadata  []byte
	Content   []byte
	Buffers   [][]byte
}

// ErrNoDelimiter and ErrShort describe frames that are not a Jupyter message.
var (
	ErrNoDelimiter = errors.New("no <IDS|MSG> delimiter")
	ErrShort       = errors.New("fewer than the four JSON frames after the signature")
)

// Parse splits frames into a Message without copying or decoding JSON.
func Parse(frames [][]byte) (*Message, error) {
	d := -1
	for i, f := range frames {
		if bytes.Equal(f, Delimiter) {
			d = i
			break
		}
	}
	if d < 0 {
		return nil, ErrNoDelimiter
	}
	rest := frames[d+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%w (%d frames)", ErrShort, len(rest))
	}
	return &Message{
		Idents:    frames[:d],
		Signature: rest[0],
		Header:    rest[1],
		Parent:    rest[2],
		Metadata:  rest[3],
		Content:   rest[4],
		Buffers:   rest[5:],
	}, nil
}

// Frames assembles the message back into frames, in wire order.
func (m *Message) Frames() [][]byte {
	out := make([][]byte, 0, len(m.Idents)+6+len(m.Buffers))
	out = append(out, m.Idents...)
	out = append(out, Delimiter, m.Signature, m.Header, m.Parent, m.Metadata, m.Content)
	return append(out, m.Buffers...)
}
