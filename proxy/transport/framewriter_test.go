package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// recorder is the socket under a frameWriter: it keeps what each Write
// received and where in the stream each Write ended.
type recorder struct {
	writes [][]byte // copies
	firsts []*byte  // first byte of each Write as passed, to spot copies
	ends   []int
	total  int
	err    error
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.writes = append(r.writes, bytes.Clone(p))
	var first *byte
	if len(p) > 0 {
		first = &p[0]
	}
	r.firsts = append(r.firsts, first)
	r.total += len(p)
	r.ends = append(r.ends, r.total)
	return len(p), nil
}

func (r *recorder) stream() []byte { return bytes.Join(r.writes, nil) }

// flagCommand marks a ZMTP command frame (READY, PING...), which the
// writer needs no special case for.
const flagCommand = 0x04

// zmtpFrame encodes one frame the way zmq4 does: header, then body.
func zmtpFrame(flags byte, body []byte) (hdr []byte) {
	if len(body) > 255 {
		hdr = make([]byte, 9)
		hdr[0] = flags | flagLong
		binary.BigEndian.PutUint64(hdr[1:], uint64(len(body)))
		return hdr
	}
	return []byte{flags, byte(len(body))}
}

// zmtpMessage encodes frames as one message: every frame but the last has MORE.
func zmtpMessage(frames ...[]byte) [][]byte {
	var parts [][]byte
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		parts = append(parts, zmtpFrame(flags, f), f)
	}
	return parts
}

func greeting() []byte {
	g := make([]byte, greetingLen)
	g[0], g[9], g[10] = 0xff, 0x7f, 3
	copy(g[12:], "NULL")
	return g
}

func command(name string, body []byte) [][]byte {
	b := append([]byte{byte(len(name))}, name...)
	b = append(b, body...)
	return [][]byte{zmtpFrame(flagCommand, b), b}
}

// TestFrameWriterFlushesEachMessageOnce feeds a greeting, a READY command
// and a message with empty, 255- and 256-byte frames, split as zmq4 splits
// them, byte by byte and all at once: the socket must see exactly those
// three units, each in one Write.
func TestFrameWriterFlushesEachMessageOnce(t *testing.T) {
	units := [][][]byte{
		{greeting()},
		command("READY", []byte("\x0bSocket-Type\x00\x00\x00\x06ROUTER")),
		zmtpMessage([]byte("id"), nil, bytes.Repeat([]byte("a"), 255), bytes.Repeat([]byte("b"), 256)),
	}
	var want [][]byte
	var parts [][]byte
	for _, u := range units {
		want = append(want, bytes.Join(u, nil))
		parts = append(parts, u...)
	}
	all := bytes.Join(parts, nil)
	splits := map[string][][]byte{
		"zmq4":        parts,
		"bytewise":    bytes.SplitAfter(all, nil),
		"all at once": {all},
	}
	for name, writes := range splits {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			fw := newFrameWriter(rec, bufSize)
			for _, p := range writes {
				if n, err := fw.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
				}
			}
			if len(rec.writes) != len(want) {
				t.Fatalf("socket got %d writes, want %d", len(rec.writes), len(want))
			}
			for i := range want {
				if !bytes.Equal(rec.writes[i], want[i]) {
					t.Errorf("write %d = %q, want %q", i, rec.writes[i], want[i])
				}
			}
		})
	}
}

// TestFrameWriterPassesLargeBodiesThrough checks a body bigger than the
// buffer reaches the socket as the caller's own slice and the buffer
// keeps its size.
func TestFrameWriterPassesLargeBodiesThrough(t *testing.T) {
	big := bytes.Repeat([]byte{0x5a}, 4*bufSize)
	msg := zmtpMessage([]byte("content"), big, []byte("tail"))
	rec := &recorder{}
	fw := newFrameWriter(rec, bufSize)
	fw.Write(greeting())
	for _, p := range msg {
		if _, err := fw.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rec.stream(), append(greeting(), bytes.Join(msg, nil)...); !bytes.Equal(got, want) {
		t.Fatalf("socket got %d bytes, not the %d written", len(got), len(want))
	}
	passed := false
	for i, first := range rec.firsts {
		passed = passed || (first == &big[0] && len(rec.writes[i]) == len(big))
	}
	if !passed {
		t.Error("the large body was copied instead of written through")
	}
	if cap(fw.buf) != bufSize {
		t.Errorf("buffer capacity grew to %d, want %d", cap(fw.buf), bufSize)
	}
	if fw.vec[0] != nil || fw.vec[1] != nil {
		t.Error("the writer still holds the large body after writing it")
	}
}

// TestFrameWriterDoesNotAllocate: small messages and large bodies alike
// cost no garbage per message.
func TestFrameWriterDoesNotAllocate(t *testing.T) {
	fw := newFrameWriter(io.Discard, bufSize)
	fw.Write(greeting())
	msgs := [][][]byte{
		zmtpMessage([]byte("<IDS|MSG>"), []byte("{}"), []byte(`{"code":"pass"}`)),
		zmtpMessage([]byte("<IDS|MSG>"), make([]byte, 2*bufSize)),
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, m := range msgs {
			for _, p := range m {
				fw.Write(p)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message pair, want 0", allocs)
	}
}

// TestFrameWriterRandomStreams writes random messages with random splits
// through a small buffer: the socket must get the exact stream, every
// message must end with a Write, and a message that fits the buffer must
// arrive in exactly one Write.
func TestFrameWriterRandomStreams(t *testing.T) {
	const size = 256
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		rec := &recorder{}
		fw := newFrameWriter(rec, size)
		var all []byte
		var bounds [][2]int // [start, end) of each unit that must flush
		write := func(parts [][]byte) {
			start := len(all)
			for _, p := range parts {
				all = append(all, p...)
			}
			bounds = append(bounds, [2]int{start, len(all)})
		}
		write([][]byte{greeting()})
		for range 20 {
			frames := make([][]byte, 1+rng.IntN(5))
			for i := range frames {
				frames[i] = bytes.Repeat([]byte{byte(i)}, rng.IntN(3)*rng.IntN(300))
			}
			write(zmtpMessage(frames...))
		}
		for off := 0; off < len(all); {
			n := min(1+rng.IntN(400), len(all)-off)
			if _, err := fw.Write(all[off : off+n]); err != nil {
				t.Fatal(err)
			}
			off += n
		}
		if !bytes.Equal(rec.stream(), all) {
			t.Fatalf("round %d: stream differs", round)
		}
		if cap(fw.buf) != size {
			t.Fatalf("round %d: buffer capacity grew to %d, want %d", round, cap(fw.buf), size)
		}
		ends := map[int]bool{}
		for _, e := range rec.ends {
			ends[e] = true
		}
		for _, b := range bounds {
			if !ends[b[1]] {
				t.Fatalf("round %d: unit [%d,%d) not flushed at its end", round, b[0], b[1])
			}
			if b[1]-b[0] > size {
				continue
			}
			for e := b[0] + 1; e < b[1]; e++ {
				if ends[e] {
					t.Fatalf("round %d: unit [%d,%d) of %d bytes split at %d", round, b[0], b[1], b[1]-b[0], e)
				}
			}
		}
	}
}

// TestFrameWriterKeepsFirstError: the socket's own error comes back, a
// body the socket refused is not counted as written, and later Writes
// fail the same way without touching the socket again.
func TestFrameWriterKeepsFirstError(t *testing.T) {
	broken := errors.New("broken pipe")
	rec := &recorder{err: broken}
	if _, err := newFrameWriter(rec, bufSize).Write(greeting()); err != broken {
		t.Fatalf("greeting: err = %v, want the socket's error", err)
	}

	rec = &recorder{}
	fw := newFrameWriter(rec, bufSize)
	fw.Write(greeting())
	big := make([]byte, 2*bufSize)
	fw.Write(zmtpMessage(big)[0])
	rec.err = broken
	if n, err := fw.Write(big); n != 0 || err != broken {
		t.Fatalf("large body: Write = %d, %v, want 0 and the socket's error", n, err)
	}
	rec.err = nil
	if n, err := fw.Write([]byte{0, 0}); n != 0 || err != broken {
		t.Fatalf("after failure: Write = %d, %v, want 0 and the first error", n, err)
	}
	if len(rec.writes) != 1 {
		t.Errorf("socket written %d times, want only the greeting", len(rec.writes))
	}
}
