package diagnosis

import (
	"bytes"
	"strings"
	"sync"
)

// Tail keeps the last bytes written to it, so the last words of a dying
// kernel (faulthandler's stack, a CUDA error, a glibc abort message) can be
// read after it died. Tee the kernel's stderr and stdout through it; use one
// Tail per stream so their lines do not interleave, and where several
// writers feed one stream, give each its own Source. It is safe for
// concurrent use, and a Write is one copy under a lock.
type Tail struct {
	mu       sync.Mutex
	buf      []byte // a ring: the oldest byte is at next once it wrapped
	next     int
	wrapped  bool
	maxLines int
	sources  []*Source
}

// Source is one writer of a Tail's stream that hands it whole lines only.
// faulthandler writes its report in pieces ("Fatal Python error: ", then
// "Aborted"), through a pipe of its own, while the kernel's stderr pipe
// carries what the crashing code printed just before: read by two
// goroutines into one Tail, a piece of one could land inside a line of the
// other, and a CUDA error's "terminate called after throwing…" no longer
// started its line (1 CI run in about 10 under load).
type Source struct {
	t       *Tail
	partial []byte // the line begun and not yet ended
}

// Source returns a new writer into the tail.
func (t *Tail) Source() *Source {
	s := &Source{t: t}
	t.mu.Lock()
	t.sources = append(t.sources, s)
	t.mu.Unlock()
	return s
}

// Write passes on p's complete lines and keeps the rest for the next Write.
// A line longer than the tail is passed on in pieces. It never fails.
func (s *Source) Write(p []byte) (int, error) {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	s.partial = append(s.partial, p...)
	end := bytes.LastIndexByte(s.partial, '\n') + 1
	if len(s.partial)-end >= len(t.buf) {
		end = len(s.partial)
	}
	t.write(s.partial[:end])
	s.partial = append(s.partial[:0], s.partial[end:]...)
	return len(p), nil
}

// NewTail keeps at most maxBytes, of which Lines returns at most the last
// maxLines lines.
func NewTail(maxBytes, maxLines int) *Tail {
	return &Tail{buf: make([]byte, max(maxBytes, 1)), maxLines: max(maxLines, 1)}
}

// Write keeps p's last bytes; it never fails, so a Tail in an
// io.MultiWriter never stops the output it shadows.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.write(p)
	return len(p), nil
}

// write keeps p's last bytes. Call with t.mu held.
func (t *Tail) write(p []byte) {
	if len(p) >= len(t.buf) {
		p = p[len(p)-len(t.buf):]
		t.next, t.wrapped = 0, true
	}
	c := copy(t.buf[t.next:], p)
	if c < len(p) {
		t.next = copy(t.buf, p[c:])
		t.wrapped = true
	} else {
		t.next += c
	}
	if t.next == len(t.buf) {
		t.next, t.wrapped = 0, true
	}
}

// Reset forgets what was written so far, unfinished lines included.
func (t *Tail) Reset() {
	t.mu.Lock()
	t.next, t.wrapped = 0, false
	for _, s := range t.sources {
		s.partial = s.partial[:0]
	}
	t.mu.Unlock()
}

// Lines returns the last lines written, oldest first, as a terminal would
// show them: a carriage return starts the line over. A line cut in two by
// the ring's start is dropped; an unfinished last line is kept, and so is
// each Source's, after the rest.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	wrapped := t.wrapped
	var text string
	if wrapped {
		text = string(t.buf[t.next:]) + string(t.buf[:t.next])
	} else {
		text = string(t.buf[:t.next])
	}
	for _, s := range t.sources {
		if len(s.partial) > 0 {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += string(s.partial) + "\n"
		}
	}
	t.mu.Unlock()

	if wrapped {
		if _, rest, ok := strings.Cut(text, "\n"); ok {
			text = rest
		}
	}
	text = strings.TrimSuffix(strings.ToValidUTF8(text, "\uFFFD"), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	lines = lines[max(len(lines)-t.maxLines, 0):]
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return lines
}
