package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Protocol is the messaging protocol version the proxy's own messages declare.
const Protocol = "5.3"

// Builder makes the proxy's own messages: fresh msg_id and date on each, so
// jupyter_client's duplicate-signature check never rejects them.
type Builder struct {
	Signer  *Signer
	Session string
}

// NewBuilder returns a Builder with a session id of its own.
func NewBuilder(s *Signer) *Builder {
	return &Builder{Signer: s, Session: uuid.NewString()}
}

// Build returns a signed message of msgType in reply to (or published for)
// parent, the raw header frame of the request ("{}" for none).
func (b *Builder) Build(idents [][]byte, msgType string, parent []byte, content any) (*Message, error) {
	hdr, err := json.Marshal(map[string]string{
		"msg_id":   uuid.NewString(),
		"msg_type": msgType,
		"session":  b.Session,
		"username": "jupyter-guard",
		"date":     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		"version":  Protocol,
	})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("%s content: %w", msgType, err)
	}
	if len(parent) == 0 {
		parent = []byte("{}")
	}
	meta := []byte("{}")
	return &Message{
		Idents:    idents,
		Signature: b.Signer.Sign(hdr, parent, meta, body),
		Header:    hdr,
		Parent:    parent,
		Metadata:  meta,
		Content:   body,
	}, nil
}
