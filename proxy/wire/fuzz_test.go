package wire

import (
	"bytes"
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
