package zmtp

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestReadFrameSizes: bodies either side of bodyChunk and of its
// doublings come out whole, and reading one never eats into the next.
func TestReadFrameSizes(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{1})
	var stream []byte
	var want [][]byte
	for _, n := range []int{0, 255, 256, bodyChunk - 1, bodyChunk, bodyChunk + 1, 2 * bodyChunk, 5*bodyChunk + 7} {
		body := make([]byte, n)
		rng.Read(body)
		want = append(want, body)
		stream = append(stream, frame(0, body)...)
	}
	c := readerConn(stream, nil)
	for i, w := range want {
		got, err := c.readMsg()
		if err != nil {
			t.Fatalf("message %d (%d bytes): %v", i, len(w), err)
		}
		if len(got) != 1 || !bytes.Equal(got[0], w) {
			t.Fatalf("message %d: want one frame of %d bytes, got %d frames", i, len(w), len(got))
		}
	}
	if _, err := c.readMsg(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
}

// TestAnnouncedSizeIsNotAllocated: a peer that announces the largest frame
// allowed and then sends a few bytes costs about what it sent, not the
// size it announced (that was 4 GiB per connection, for nine bytes).
func TestAnnouncedSizeIsNotAllocated(t *testing.T) {
	stream := append([]byte{flagLong, 0, 0, 0, 1, 0, 0, 0, 0}, make([]byte, 1000)...)
	if maxFrame != 1<<32 {
		t.Fatalf("the header above announces 4 GiB; maxFrame is now %d", maxFrame)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readerConn(stream, nil).readMsg()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a frame cut short: %v, want unexpected EOF", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*bodyChunk {
		t.Errorf("reading 1009 bytes allocated %d", n)
	}
}

// TestReadMsgAnswersPing: a PING inside the stream gets a PONG with its
// context, and the message after it still arrives.
func TestReadMsgAnswersPing(t *testing.T) {
	in := append(command("PING", []byte("\x00\x0actx")), frame(0, []byte("after"))...)
	var answer bytes.Buffer
	got, err := readerConn(in, &answer).readMsg()
	if err != nil || len(got) != 1 || string(got[0]) != "after" {
		t.Fatalf("readMsg = %q, %v; want the message after the PING", got, err)
	}
	if want := command("PONG", []byte("ctx")); !bytes.Equal(answer.Bytes(), want) {
		t.Errorf("answered % x, want % x", answer.Bytes(), want)
	}
}

// TestReadMsgStopsAtError: a peer's ERROR command ends the connection
// with its reason.
func TestReadMsgStopsAtError(t *testing.T) {
	in := append(command("ERROR", []byte("\x0bgoing away!")), frame(0, []byte("never"))...)
	_, err := readerConn(in, nil).readMsg()
	if err == nil || !strings.Contains(err.Error(), "going away") {
		t.Errorf("readMsg after ERROR: %v", err)
	}
}

// TestWriteMsgKeepsNoFrame: once a message has left, the buffer list kept
// for the next one refers to none of its frames; a 50 MB output must not
// stay alive in the proxy until the next message overwrites the list.
func TestWriteMsgKeepsNoFrame(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 4*inlineMax)
	c := readerConn(nil, nil)
	// Enough large frames that the list grows past its first array, and a
	// buffer's worth of small ones, so a flush happens mid-message too.
	frames := [][]byte{[]byte("topic")}
	for range 9 {
		frames = append(frames, big, bytes.Repeat([]byte("s"), inlineMax))
	}
	if err := c.writeMsg(frames); err != nil {
		t.Fatal(err)
	}
	for i, b := range c.vec[:cap(c.vec)] {
		if b != nil {
			t.Fatalf("entry %d of the kept buffer list still holds %d bytes", i, len(b))
		}
	}
}
