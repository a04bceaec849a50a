package zmtp_test

import (
	"math/rand/v2"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/zmtp"
)

// mixedMessages are messages for writeMsg's two paths at once: frames up
// to inlineMax are copied into its 64 KiB buffer, larger ones go out from
// where they are in the same writev, and the buffer is flushed when it
// fills mid-message. Each mixes small and large frames and is larger than
// the buffer.
func mixedMessages() [][][]byte {
	src := rand.NewChaCha8([32]byte{5})
	rng := rand.New(src)
	sizes := []int{0, 1, 200, 255, 256, zmtp.InlineMax - 9, zmtp.InlineMax, zmtp.InlineMax + 1,
		zmtp.BufSize - 9, zmtp.BufSize, zmtp.BufSize + 1, 3 * zmtp.BufSize}
	// First by hand: inline frames that overflow the buffer between a
	// large frame and the small ones after it.
	in := zmtp.InlineMax
	first := []int{10, in + 1, 20, in, in, in, in, in, 3 * zmtp.BufSize, 0, 30}
	var msgs [][][]byte
	for frames := first; len(msgs) < 30; frames = nil {
		if frames == nil {
			for range 2 + rng.IntN(12) {
				frames = append(frames, sizes[rng.IntN(len(sizes))])
			}
		}
		small, large, total := false, false, 0
		for _, n := range frames {
			small = small || n <= zmtp.InlineMax
			large = large || n > zmtp.InlineMax
			total += n
		}
		if !small || !large || total <= zmtp.BufSize {
			continue
		}
		msgs = append(msgs, randomFrames(src, frames...))
	}
	return msgs
}

// TestWriteMsgMixedFrames: messages written by Router.Send (writeMsg)
// arrive at a DEALER byte for byte. The DEALER is our own (readMsg reads
// each frame plainly, without writeMsg's buffering); libzmq reads what the
// Router sends in TestPyzmqDealerToOurRouter.
func TestWriteMsgMixedFrames(t *testing.T) {
	msgs := mixedMessages()
	forSchemes(t, func(t *testing.T, scheme string) {
		hello := newInbox(t)
		r := listenRouter(t, bindEndpoint(t, scheme), testLog(t), func(_ *zmtp.Router, frames [][]byte) {
			hello.handle(frames)
		})
		dealer, got := dialDealer(t, r.Endpoint(), "reader")
		if err := dealer.Send(msg("hello")); err != nil { // the Router knows the DEALER once this is in
			t.Fatal(err)
		}
		id := hello.next()[0]
		for i, m := range msgs {
			if err := r.Send(append([][]byte{id}, m...)); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if err := sameFrames(got.next(), m); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
	})
}
