package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"sync"
)

// ErrBadSignature is returned for a message whose HMAC does not match.
var ErrBadSignature = errors.New("bad signature")

// Signer signs and verifies messages with the connection file's key
// (hmac-sha256). An empty key means no signing, as in jupyter_client.
type Signer struct {
	key  []byte
	macs sync.Pool
}

// NewSigner returns a Signer for key.
func NewSigner(key string) *Signer {
	s := &Signer{key: []byte(key)}
	s.macs.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// Sign returns the hex HMAC of the four JSON frames.
func (s *Signer) Sign(header, parent, metadata, content []byte) []byte {
	if len(s.key) == 0 {
		return []byte{}
	}
	var sum [sha256.Size]byte
	s.mac(header, parent, metadata, content, sum[:0])
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum[:])
	return out
}

// Verify checks m's signature in constant time, byte for byte against the
// lower-case hex digest, as jupyter_client's Session does (compare_digest
// of hexdigest()): the same digest in upper case is not the signature.
func (s *Signer) Verify(m *Message) error {
	if len(s.key) == 0 {
		return nil
	}
	var sum [sha256.Size]byte
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], s.mac(m.Header, m.Parent, m.Metadata, m.Content, sum[:0]))
	if !hmac.Equal(m.Signature, want[:]) {
		return ErrBadSignature
	}
	return nil
}

func (s *Signer) mac(header, parent, metadata, content, out []byte) []byte {
	h := s.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(header)
	h.Write(parent)
	h.Write(metadata)
	h.Write(content)
	out = h.Sum(out)
	s.macs.Put(h)
	return out
}
