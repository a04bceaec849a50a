package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Header holds the header fields the proxy routes on. Decoding into it reads
// only these fields; the bytes on the wire stay as they were.
type Header struct {
	MsgID   string `json:"msg_id"`
	MsgType string `json:"msg_type"`
	Session string `json:"session"`
	Kind    Kind   `json:"-"` // MsgType, classified
}

// DecodeHeader reads the routing fields of a header or parent_header frame.
// An empty parent ("{}") gives a zero Header. It is on the forwarding path
// twice per message: a header as Jupyter writes it (a flat object of plain
// strings and nulls) is read by scanFlat, anything else by encoding/json,
// which also gives the error for a frame that is not JSON.
func DecodeHeader(frame []byte) (Header, error) {
	var h Header
	if scanFlat(frame, headerKeys, &h.MsgID, &h.MsgType, &h.Session) {
		h.Kind = KindOf(h.MsgType)
		return h, nil
	}
	var decoded Header // not h: what encoding/json is given escapes to the heap
	if err := json.Unmarshal(frame, &decoded); err != nil {
		return Header{}, fmt.Errorf("header is not JSON: %w", err)
	}
	decoded.Kind = KindOf(decoded.MsgType)
	return decoded, nil
}

var headerKeys = []string{"msg_id", "msg_type", "session"}

// ExecutionState reads a status message's content: "busy", "idle" or
// "starting"; false if the content is not a JSON object.
func ExecutionState(content []byte) (string, bool) {
	var state string
	if scanFlat(content, stateKeys, &state) {
		return state, true
	}
	var c struct {
		State string `json:"execution_state"`
	}
	if err := json.Unmarshal(content, &c); err != nil {
		return "", false
	}
	return c.State, true
}

var stateKeys = []string{"execution_state"}

// ExecutionCount reads execute_input's execution_count; false if the
// content is not a JSON object. It runs once per cell on the forwarding
// path: the content as kernels write it (the code, a string, and the
// count) is read by scanFlat, without decoding the code; anything else by
// encoding/json.
func ExecutionCount(content []byte) (int, bool) {
	var n int
	if scanFlat(content, countKeys, &n) {
		return n, true
	}
	var c struct {
		N int `json:"execution_count"`
	}
	if err := json.Unmarshal(content, &c); err != nil {
		return 0, false
	}
	return c.N, true
}

var countKeys = []string{"execution_count"}

// scanFlat reads the fields named keys of a flat JSON object whose values
// are strings, true, false or null into dst (one per key): a *string takes
// a string, a *int a non-negative integer of at most 9 digits. It reports
// false for anything else (nesting, other numbers, invalid JSON, a field of
// keys that is escaped, not ASCII, null, or named in another case): then
// encoding/json decides. Whatever it accepts is valid JSON that
// encoding/json decodes the same way.
func scanFlat(b []byte, keys []string, dst ...any) bool {
	s := scanner{b: b}
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return s.end()
	}
	for {
		key, plain, ok := s.str()
		if !ok || !plain || !s.byte(':') {
			return false
		}
		var to any
		for i, k := range keys {
			if string(key) == k {
				to = dst[i]
			} else if len(key) == len(k) && bytes.EqualFold(key, []byte(k)) {
				return false // encoding/json matches keys in any case
			}
		}
		switch to := to.(type) {
		case *int:
			n, ok := s.count()
			if !ok {
				return false
			}
			*to = n
		case *string:
			v, plain, ok := s.str()
			if !ok || !plain {
				return false
			}
			*to = string(v)
		default:
			if s.peek() == '"' {
				if _, _, ok := s.str(); !ok {
					return false
				}
			} else if !s.literal() {
				return false
			}
		}
		if s.byte('}') {
			return s.end()
		}
		if !s.byte(',') {
			return false
		}
	}
}

// scanner walks a JSON text for scanHeader.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// byte consumes c (after white space) if it comes next.
func (s *scanner) byte(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str consumes a string and returns its raw bytes; plain says it has no
// escapes and only ASCII, so the raw bytes are its value.
func (s *scanner) str() (raw []byte, plain, ok bool) {
	if !s.byte('"') {
		return nil, false, false
	}
	start, plain := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], plain, true
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if !s.escape() {
				return nil, false, false
			}
		}
	}
	return nil, false, false
}

// escape checks the escape at s.i (a backslash) and leaves s.i on its last byte.
func (s *scanner) escape() bool {
	s.i++
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.i+4 >= len(s.b) {
			return false
		}
		for _, c := range s.b[s.i+1 : s.i+5] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

// count consumes a non-negative integer of 1 to 9 digits, with no leading
// zero: what an int holds on every platform, exactly as JSON writes it.
func (s *scanner) count() (int, bool) {
	s.space()
	start, n := s.i, 0
	for ; s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9'; s.i++ {
		n = n*10 + int(s.b[s.i]-'0')
	}
	digits := s.i - start
	if digits == 0 || digits > 9 || digits > 1 && s.b[start] == '0' {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false // a fraction or an exponent: encoding/json decides
	}
	return n, true
}

// literal consumes true, false or null.
func (s *scanner) literal() bool {
	s.space()
	for _, lit := range [...]string{"null", "true", "false"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}
