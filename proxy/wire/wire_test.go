package wire

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func signed(t testing.TB, s *Signer, idents ...string) [][]byte {
	t.Helper()
	b := NewBuilder(s)
	var ids [][]byte
	for _, id := range idents {
		ids = append(ids, []byte(id))
	}
	m, err := b.Build(ids, "execute_request", nil, map[string]any{"code": "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	return m.Frames()
}

func TestParseRoundTrip(t *testing.T) {
	s := NewSigner("secret")
	frames := signed(t, s, "client-a", "client-b")
	frames = append(frames, []byte{0, 1, 2}) // a binary buffer
	m, err := Parse(frames)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Idents) != 2 || string(m.Idents[1]) != "client-b" || len(m.Buffers) != 1 {
		t.Fatalf("parsed %+v", m)
	}
	if err := s.Verify(m); err != nil {
		t.Fatal(err)
	}
	out := m.Frames()
	if len(out) != len(frames) {
		t.Fatalf("%d frames back, want %d", len(out), len(frames))
	}
	for i := range out {
		if !bytes.Equal(out[i], frames[i]) {
			t.Fatalf("frame %d changed", i)
		}
	}
	h, err := DecodeHeader(m.Header)
	if err != nil || h.MsgType != "execute_request" || h.MsgID == "" {
		t.Fatalf("header %+v, %v", h, err)
	}
}

func TestVerifyRejects(t *testing.T) {
	s := NewSigner("secret")
	m, _ := Parse(signed(t, s))
	if err := NewSigner("other").Verify(m); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("wrong key: %v", err)
	}
	m.Content = []byte(`{"code":"rm -rf /"}`)
	if err := s.Verify(m); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("tampered content: %v", err)
	}
	m.Signature = bytes.ToUpper(s.Sign(m.Header, m.Parent, m.Metadata, m.Content))
	if err := s.Verify(m); !errors.Is(err, ErrBadSignature) {
		t.Errorf("the digest in upper case verified; Jupyter compares the lower-case hex exactly")
	}
	m.Signature = []byte("zz")
	if err := s.Verify(m); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("non-hex signature: %v", err)
	}
	if err := NewSigner("").Verify(m); err != nil {
		t.Fatalf("empty key must not check: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	if _, err := Parse([][]byte{[]byte("id"), []byte("{}")}); !errors.Is(err, ErrNoDelimiter) {
		t.Fatalf("no delimiter: %v", err)
	}
	if _, err := Parse([][]byte{Delimiter, []byte("sig"), []byte("{}")}); !errors.Is(err, ErrShort) {
		t.Fatalf("short: %v", err)
	}
}

func TestBuildIsFresh(t *testing.T) {
	b := NewBuilder(NewSigner("k"))
	m1, _ := b.Build(nil, "status", []byte(`{"msg_id":"p"}`), map[string]string{"execution_state": "idle"})
	m2, _ := b.Build(nil, "status", []byte(`{"msg_id":"p"}`), map[string]string{"execution_state": "idle"})
	if bytes.Equal(m1.Signature, m2.Signature) {
		t.Fatal("two built messages share a signature; jupyter_client would reject the second")
	}
}

func BenchmarkVerify(b *testing.B) {
	s := NewSigner("0123456789abcdef0123456789abcdef")
	m, _ := Parse(signed(b, s, "client"))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Verify(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeHeader reads a header as ipykernel writes it: the proxy
// does twice per message from the kernel.
func BenchmarkDecodeHeader(b *testing.B) {
	frame := []byte(`{"msg_id": "e2b0bc02-7c3a3b8e1f0c4a36a7d1b3f1_2171_42", "msg_type": "status", "username": "jovyan", "session": "e2b0bc02-7c3a3b8e1f0c4a36a7d1b3f1", "date": "2026-11-22T03:10:11.123456Z", "version": "5.4"}`)
	for b.Loop() {
		if _, err := DecodeHeader(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExecutionCount(t *testing.T) {
	for _, c := range []struct {
		content string
		n       int
		ok      bool
	}{
		{`{"code":"x = 1","execution_count":7}`, 7, true},
		{`{"execution_count": 123456789, "code": "print(\"é\")\n"}`, 123456789, true},
		{`{"code":"", "execution_count":0}`, 0, true},
		// Not what the scanner takes: encoding/json reads them.
		{`{"code":"","execution_count":1234567890}`, 1234567890, true},
		{`{"code":"","execution_count":5,"metadata":{"a":1}}`, 5, true},
		{`{"code":""}`, 0, true},
		{`{"execution_count":"5"}`, 0, false},
		{`{"execution_count":1e3}`, 0, false},
		{`[1]`, 0, false},
		{`not json`, 0, false},
	} {
		n, ok := ExecutionCount([]byte(c.content))
		if n != c.n || ok != c.ok {
			t.Errorf("ExecutionCount(%s) = %d, %v; want %d, %v", c.content, n, ok, c.n, c.ok)
		}
	}
}

// The table decides what a frontend may send where: a request of any name
// on shell or control, comm messages on shell, input_reply on stdin, and
// nothing on iopub or hb.
func TestRoutes(t *testing.T) {
	for _, c := range []struct {
		msgType  string
		kind     Kind
		accepted []Channel
		replied  bool
	}{
		{"execute_request", ExecuteRequest, []Channel{Shell, Control}, true},
		{"complete_request", OtherRequest, []Channel{Shell, Control}, true},
		{"_request", Other, nil, false},
		{"comm_msg", CommMsg, []Channel{Shell}, false},
		{"input_reply", InputReply, []Channel{Stdin}, false},
		{"execute_reply", ExecuteReply, nil, false},
		{"status", Status, nil, false},
		{"display_data", Other, nil, false},
	} {
		k := KindOf(c.msgType)
		if k != c.kind || k.Replied() != c.replied {
			t.Errorf("%s: kind %d replied %v, want %d %v", c.msgType, k, k.Replied(), c.kind, c.replied)
		}
		for ch := range NumChannels {
			if want := slices.Contains(c.accepted, ch); k.Accepted(ch) != want {
				t.Errorf("%s on %s: accepted %v, want %v", c.msgType, ch, !want, want)
			}
		}
	}
	if got := ReplyType("usage_request"); got != "usage_reply" {
		t.Errorf("ReplyType: %s", got)
	}
}
