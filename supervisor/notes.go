package supervisor

import (
	"encoding/json"
	"time"

	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// noteWait bounds how long a cell's idle waits for its notes (posted
// under a cell that ran out of GPU memory, GPU software that would not
// start, the allocation ceiling), which take a few milliseconds unless
// another proxy is slow to answer: what is posted after the idle never
// shows in the cell.
const noteWait = 2 * time.Second

// postNote writes the note of kind under cell r with write, in the
// background, off the forwarding path (notes measure, read NVML, ask the
// other proxies); once per kind: the traceback and the error output tell
// the same story. It returns at once; the cell's idle is held for it
// (cellNotes).
func (s *Supervisor) postNote(r *proxy.Request, kind string, write func() (string, bool)) {
	posted, first := r.Cell.Note(kind)
	if !first {
		return
	}
	go func() {
		defer close(posted)
		if text, ok := write(); ok {
			if err := s.proxy.Stream(r.Header, "stderr", text); err != nil {
				s.cfg.Log.Printf("post the %s note: %v", kind, err)
			}
		}
	}()
}

// replyWait bounds how long a cell's idle waits for its execute_reply to
// be looked at: ipykernel sends the reply first, but the proxy reads
// shell and iopub apart, and a kernel may drop a reply (droppedreply.go).
const replyWait = 250 * time.Millisecond

// cellNotes is closed once cell r's notes are in: its execute_reply has
// been looked at (at most replyWait) and the notes being written then are
// posted (notesWritten); nil if there is nothing to wait for.
func (s *Supervisor) cellNotes(r *proxy.Request) <-chan struct{} {
	if isClosed(r.Cell.Replied()) {
		return s.notesWritten(r)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(replyWait)
		defer t.Stop()
		select {
		case <-r.Cell.Replied():
		case <-t.C:
		}
		if written := s.notesWritten(r); written != nil {
			<-written
		}
	}()
	return done
}

// notesWritten is closed once the notes of cell r being written are
// posted, or noteWait has passed (nil if none is being written).
func (s *Supervisor) notesWritten(r *proxy.Request) <-chan struct{} {
	waits := r.Cell.TakeNotes()
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
				s.cfg.Log.Printf("a note for cell [%d] came too late for the cell", r.Cell.Count())
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
