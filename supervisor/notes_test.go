package supervisor

import (
	"log"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/lockedbuf"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// TestANoteThatNeverComes: a note whose writing hangs (NVML, or another
// proxy that does not answer) does not hold the hook that forwards the
// cell's idle: what the idle waits for is handed back at once, and closes
// after noteWait, with a line in the log; the note is then forgotten.
func TestANoteThatNeverComes(t *testing.T) {
	logged := &lockedbuf.Buffer{}
	s := &Supervisor{cfg: Config{Log: log.New(logged, "", 0)}}
	never := make(chan struct{})
	defer close(never)
	cell, other := execute(7), execute(8)
	s.postNote(cell, "gpu", func() (string, bool) {
		<-never
		return "", false
	})
	s.postNote(other, "gpu", func() (string, bool) { return "", false })

	written := s.notesWritten(cell)
	if written == nil || isClosed(written) {
		t.Fatal("the idle does not wait for the note being written, or its hook waited for it")
	}
	select {
	case <-written:
	case <-time.After(noteWait + 10*time.Second):
		t.Fatalf("the idle still waits %s after noteWait (%s)", 10*time.Second, noteWait)
	}
	if !strings.Contains(logged.String(), "a note for cell [7] came too late for the cell") {
		t.Errorf("log %q, want the late note said", logged.String())
	}
	if again := s.notesWritten(cell); again != nil {
		t.Error("the late note is still waited for")
	}
	if s.notesWritten(other) == nil {
		t.Error("another cell's note was forgotten with it")
	}
}

// TestAnIdleWaitsForItsReplysNote: the idle of a cell whose execute_reply
// has not been read yet (shell and iopub are read apart) waits for the
// reply to be looked at and for the note it starts; one whose reply never
// comes waits replyWait, no longer.
func TestAnIdleWaitsForItsReplysNote(t *testing.T) {
	s := &Supervisor{cfg: Config{Log: log.New(&lockedbuf.Buffer{}, "", 0)}}
	answered, dropped := execute(1), execute(2)
	idle := s.cellNotes(answered)
	if idle == nil || isClosed(idle) {
		t.Fatal("the idle does not wait for the reply it came before")
	}
	// The reply comes, with a memory error whose note takes a while.
	written := make(chan struct{})
	s.postNote(answered, "memory", func() (string, bool) {
		<-written
		return "", false
	})
	answered.Cell.ReplyLooked()
	select {
	case <-idle:
		t.Fatal("the idle went before the reply's note was written")
	case <-time.After(replyWait + 100*time.Millisecond):
	}
	close(written)
	select {
	case <-idle:
	case <-time.After(noteWait + 10*time.Second):
		t.Fatal("the idle still waits after the reply's note was written")
	}

	select {
	case <-s.cellNotes(dropped):
	case <-time.After(replyWait + 10*time.Second):
		t.Fatalf("the idle of a cell whose reply never comes still waits %s after replyWait", 10*time.Second)
	}
}

// execute is the record of an execute request whose execute_input gave n.
func execute(n int) *proxy.Request {
	r := &proxy.Request{Kind: wire.ExecuteRequest, Cell: &proxy.Cell{}}
	r.Cell.SetCount(n)
	return r
}
