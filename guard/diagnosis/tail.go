package diagnosis

import (
	"strings"
	"sync"
)

// Tail keeps the last bytes written to it, so the last words of a dying
// kernel (faulthandler's stack, a CUDA error, a glibc abort message) can be
// read after it died. Tee the kernel's stderr and stdout through it; use one
// Tail per stream so their lines do not interleave. It is safe for
// concurrent use, and a Write is one copy under a lock.
type Tail struct {
	mu       sync.Mutex
	buf      []byte // a ring: the oldest byte is at next once it wrapped
	next     int
	wrapped  bool
	maxLines int
}

// NewTail keeps at most maxBytes, of which Lines returns at most the last
// maxLines lines.
func NewTail(maxBytes, maxLines int) *Tail {
	return &Tail{buf: make([]byte, max(maxBytes, 1)), maxLines: max(maxLines, 1)}
}

// Write keeps p's last bytes; it never fails, so a Tail in an
// io.MultiWriter never stops the output it shadows.
func (t *Tail) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
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
	return n, nil
}

// Reset forgets what was written so far.
func (t *Tail) Reset() {
	t.mu.Lock()
	t.next, t.wrapped = 0, false
	t.mu.Unlock()
}

// Lines returns the last lines written, oldest first, as a terminal would
// show them: a carriage return starts the line over. A line cut in two by
// the ring's start is dropped; an unfinished last line is kept.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	wrapped := t.wrapped
	var text string
	if wrapped {
		text = string(t.buf[t.next:]) + string(t.buf[:t.next])
	} else {
		text = string(t.buf[:t.next])
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
