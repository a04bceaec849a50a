package supervisor

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// cellNotes are the notes the proxy posts under a cell that ran into
// something: out of GPU memory, GPU software that would not start, the
// allocation ceiling. One of each kind per cell, written off the
// forwarding path (they measure, read NVML, ask the other proxies), after
// the error they explain; the cell's idle is held for them (notesWritten).
type cellNotes struct {
	mu      sync.Mutex
	pending map[string]chan struct{} // by noteKey; closed when posted
}

// noteWait bounds how long a cell's idle waits for its notes, which take a
// few milliseconds unless another proxy is slow to answer: what is posted
// after the idle never shows in the cell.
const noteWait = 2 * time.Second

func noteKey(id, kind string) string { return id + "\x00" + kind }

// postNote writes the note of kind for cell id, whose request header is
// parent, with write, in the background; once: the traceback and the
// error output tell the same story. It returns at once.
func (s *Supervisor) postNote(id, kind string, parent []byte, write func() (string, bool)) {
	n := &s.notes
	n.mu.Lock()
	key := noteKey(id, kind)
	if _, noted := n.pending[key]; noted {
		n.mu.Unlock()
		return
	}
	done := make(chan struct{})
	if n.pending == nil {
		n.pending = map[string]chan struct{}{}
	}
	n.pending[key] = done
	n.mu.Unlock()
	go func() {
		defer close(done)
		if text, ok := write(); ok {
			if err := s.proxy.Stream(parent, "stderr", text); err != nil {
				s.cfg.Log.Printf("post the %s note: %v", kind, err)
			}
		}
	}()
}

// replyWait bounds how long a cell's idle waits for its execute_reply to
// be looked at: ipykernel sends the reply first, but the proxy reads
// shell and iopub apart, and a kernel may drop a reply (droppedreply.go).
const replyWait = 250 * time.Millisecond

// cellNotes is closed once cell id's notes are in: its execute_reply has
// been looked at (at most replyWait) and the notes being written then are
// posted (notesWritten); nil if there is nothing to wait for.
func (s *Supervisor) cellNotes(id string) <-chan struct{} {
	s.mu.Lock()
	cell := s.cells[id]
	s.mu.Unlock()
	if cell == nil { // replied already, or never asked here
		return s.notesWritten(id)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(replyWait)
		defer t.Stop()
		select {
		case <-cell.replied:
		case <-t.C:
		}
		if written := s.notesWritten(id); written != nil {
			<-written
		}
	}()
	return done
}

// notesWritten is closed once the notes of cell id being written are
// posted, or noteWait has passed (nil if none is being written); it
// forgets them.
func (s *Supervisor) notesWritten(id string) <-chan struct{} {
	n := &s.notes
	n.mu.Lock()
	var waits []chan struct{}
	for key, done := range n.pending {
		if strings.HasPrefix(key, id+"\x00") {
			waits = append(waits, done)
			delete(n.pending, key)
		}
	}
	n.mu.Unlock()
	if len(waits) == 0 {
		return nil
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		t := time.NewTimer(noteWait)
		defer t.Stop()
		for _, done := range waits {
			select {
			case <-done:
			case <-t.C:
				s.cfg.Log.Printf("a note for cell %s came too late for the cell", id)
				return
			}
		}
	}()
	return written
}

// cellError is an error output's content: what the notes are found in.
type cellError struct {
	Ename, Evalue string
	Traceback     []string
}

// text is "ename: evalue", which the GPU frameworks' messages are
// matched on.
func (e cellError) text() string { return e.Ename + ": " + e.Evalue }

// decodeError decodes an error output on the forwarding path: ones over
// maxErrorSize (a traceback of a deep recursion, in full) are left alone.
func decodeError(content []byte) (cellError, bool) {
	var e cellError
	return e, len(content) <= maxErrorSize && json.Unmarshal(content, &e) == nil
}

const maxErrorSize = 256 << 10
