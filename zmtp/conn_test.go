package zmtp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestReadFrameSizes: bodies either side of the read buffers' sizes come
// out whole, and reading one never eats into the next, whether the
// connection is trusted or held to its budget.
func TestReadFrameSizes(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{1})
	var stream []byte
	var want [][]byte
	for _, n := range []int{0, 255, 256, acceptedReadBuffer - 1, acceptedReadBuffer, acceptedReadBuffer + 1,
		bufSize - 1, bufSize, bufSize + 1, 3*bufSize + 7, maxUnverified} {
		body := make([]byte, n)
		rng.Read(body)
		want = append(want, body)
		stream = append(stream, frame(0, body)...)
	}
	for name, c := range map[string]*conn{"untrusted": readerConn(stream, nil), "trusted": trustedConn(stream, nil)} {
		t.Run(name, func(t *testing.T) {
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
		})
	}
}

// TestAnnouncedSizeIsRefused: an untrusted peer that announces a frame
// above its budget is refused at the announcement, before anything is
// allocated for it (4 GiB per connection, for nine bytes, once; 256 MiB
// sent of a 4 GiB frame held 1 GiB until the process ended).
func TestAnnouncedSizeIsRefused(t *testing.T) {
	for _, size := range []uint64{maxUnverified + 1, 1 << 32} {
		stream := binary.BigEndian.AppendUint64([]byte{flagLong}, size)
		stream = append(stream, make([]byte, 1000)...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readerConn(stream, nil).readMsg()
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a message of %d bytes or more", size)) {
			t.Errorf("a frame of %d bytes: %v, want it refused at its size", size, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("refusing a frame of %d bytes allocated %d", size, n)
		}
	}
}

// TestFrameAllocatedOnce: a frame within the budget is read into one
// buffer of its size, not grown to it (which took about four times the
// frame while it arrived).
func TestFrameAllocatedOnce(t *testing.T) {
	const size = maxUnverified
	stream := append(frame(0, make([]byte, size)), frame(0, nil)...)
	c := readerConn(stream, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := c.readMsg(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > size+64<<10 {
		t.Errorf("reading a frame of %d bytes allocated %d", size, n)
	}
}

// TestUnverifiedMessageBudget: the frames of one message count together,
// a message that never ends (MORE on every frame) included; what one
// message takes beyond freeBytes comes from the pool the connections
// share, and goes back to it when the next message begins or the
// connection ends.
func TestUnverifiedMessageBudget(t *testing.T) {
	quarter := make([]byte, maxUnverified/4)
	var unterminated []byte
	for range 5 {
		unterminated = append(unterminated, frame(flagMore, quarter)...)
	}
	c := readerConn(unterminated, nil)
	_, err := c.readMsg()
	if err == nil || !strings.Contains(err.Error(), "may send 4194304") {
		t.Fatalf("an unterminated message past the budget: %v, want it refused", err)
	}
	c.budget.settle()
	if free := c.budget.pool.free.Load(); free != unverifiedPool {
		t.Errorf("after the connection: %d of the pool free, want all %d", free, unverifiedPool)
	}

	// Connections that hold 4 MiB messages each, never finished, use the
	// pool up; the next one's message beyond freeBytes is refused, and its
	// first freeBytes are still its own.
	shared := &pool{}
	shared.free.Store(unverifiedPool)
	conns := func(stream []byte) *conn {
		return pipeConnOf(stream, nil, acceptedReadBuffer, budget{free: freeBytes, max: maxUnverified, pool: shared})
	}
	held := append(frame(flagMore, make([]byte, maxUnverified-freeBytes)), frame(flagMore, make([]byte, freeBytes))...)
	var holders []*conn
	for range unverifiedPool / (maxUnverified - freeBytes) {
		h := conns(held)
		if _, err := h.readMsg(); err != io.EOF {
			t.Fatalf("a message cut short: %v, want EOF", err)
		}
		holders = append(holders, h)
	}
	small := conns(frame(0, make([]byte, freeBytes)))
	if _, err := small.readMsg(); err != nil {
		t.Errorf("a message of freeBytes with the pool in use: %v", err)
	}
	// What the holders left of the pool is less than freeBytes each.
	refused := conns(frame(0, make([]byte, 8*freeBytes)))
	_, err = refused.readMsg()
	if err == nil || !strings.Contains(err.Error(), "are in use") {
		t.Errorf("a message beyond freeBytes with the pool in use: %v, want it refused", err)
	}
	for _, h := range append(holders, small, refused) {
		h.budget.settle()
	}
	if free := shared.free.Load(); free != unverifiedPool {
		t.Errorf("after the holders ended: %d of the pool free, want all %d", free, unverifiedPool)
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
