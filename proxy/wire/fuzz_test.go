package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecode feeds arbitrary frames (split on a 0xff byte) to the decoder the
// proxy runs on every frontend message: it must never panic, and whatever it
// accepts must survive a round trip unchanged.
func FuzzDecode(f *testing.F) {
	s := NewSigner("key")
	f.Add(bytes.Join(signed(f, s, "id"), []byte{0xff}))
	f.Add([]byte("<IDS|MSG>\xff\xff{}\xff{}\xff{}\xff{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := bytes.Split(data, []byte{0xff})
		m, err := Parse(frames)
		if err != nil {
			return
		}
		_ = s.Verify(m)
		_, _ = DecodeHeader(m.Header)
		back := m.Frames()
		if len(back) != len(frames) {
			t.Fatalf("round trip changed the frame count: %d → %d", len(frames), len(back))
		}
		for i := range back {
			if !bytes.Equal(back[i], frames[i]) {
				t.Fatalf("frame %d changed", i)
			}
		}
	})
}

// FuzzDecodeHeader: whatever the fast scanner accepts is valid JSON that
// encoding/json decodes to the same fields.
func FuzzDecodeHeader(f *testing.F) {
	f.Add([]byte(`{"msg_id":"a","msg_type":"status","session":"s","username":"u","date":"2026-01-01T00:00:00Z","version":"5.4","subshell_id":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(` { "MSG_ID" : "x" , "a\"b": "\u00e9", "ok": true } `))
	f.Add([]byte(`{"msg_id":"\u0041","n":1,"o":{"msg_id":"inner"}}`))
	f.Add([]byte(`{"execution_state": "busy"}`))
	f.Add([]byte(`{"code":"print(\"é\")\n","execution_count":12}`))
	f.Add([]byte(`{"execution_count":007}`))
	f.Add([]byte(`{"execution_count":1e3,"code":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Header
		if scanFlat(data, headerKeys, &h.MsgID, &h.MsgType, &h.Session) {
			var want Header
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("scanned %q, which encoding/json refuses: %v", data, err)
			}
			if h != want {
				t.Fatalf("scanned %q as %+v, encoding/json reads %+v", data, h, want)
			}
		}
		var n int
		if scanFlat(data, countKeys, &n) {
			var want struct {
				N int `json:"execution_count"`
			}
			if err := json.Unmarshal(data, &want); err != nil || want.N != n {
				t.Fatalf("scanned %q as count %d, encoding/json reads %d (%v)", data, n, want.N, err)
			}
		}
		var state string
		if scanFlat(data, stateKeys, &state) {
			var want struct {
				State string `json:"execution_state"`
			}
			if err := json.Unmarshal(data, &want); err != nil || want.State != state {
				t.Fatalf("scanned %q as state %q, encoding/json reads %q (%v)", data, state, want.State, err)
			}
		}
	})
}
