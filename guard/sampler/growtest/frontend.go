package growtest

import (
	"log"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/guard"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/freeze"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Frontend stands in for the supervisor in front of a guarded grow.py: it
// reports cells to the guard as the proxy would, collects what the guard
// posts, and interrupts as the supervisor does, thawing first.
type Frontend struct {
	G       *guard.Guard
	P       *Proc
	streams chan Stream
	// Interrupts counts the interrupts the guard asked for.
	Interrupts atomic.Int32
	// Ample is what the guard's Room said last.
	Ample   atomic.Bool
	stopped sync.Once
}

// Stream is one notice the guard posted.
type Stream struct {
	Parent, Name, Text string
}

func (f *Frontend) Stream(parent []byte, name, text string) {
	f.streams <- Stream{string(parent), name, text}
}

// Posted returns the notices posted so far and not yet taken, without
// waiting for more.
func (f *Frontend) Posted() []Stream {
	var out []Stream
	for {
		select {
		case s := <-f.streams:
			out = append(out, s)
		default:
			return out
		}
	}
}

func (f *Frontend) Room(ample bool) { f.Ample.Store(ample) }

func (f *Frontend) Interrupt() {
	f.Interrupts.Add(1)
	f.Button()
}

// Button is the ■ button: SIGINT to the kernel's group, then thaw (see
// guard.Guard.Thaw for the order).
func (f *Frontend) Button() {
	syscall.Kill(-f.P.Pid, syscall.SIGINT)
	f.G.Thaw()
}

// Guarded runs grow.py as the kernel (inside wrap's cgroup if given) under a
// guard configured by env, whose log goes to logger (nil: the default).
func Guarded(t testing.TB, env map[string]string, wrap func(...string) []string, logger *log.Logger) *Frontend {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &Frontend{streams: make(chan Stream, 64)} // room for a test's notices: the guard posts without waiting for a reader
	g, err := guard.New(cfg, f, logger)
	if err != nil {
		t.Fatal(err)
	}
	f.G = g
	f.P = Start(t, wrap)
	t.Cleanup(f.Stop)
	g.Attach(f.P.Pid)
	g.Ready() // as the supervisor does once the kernel answers
	return f
}

// Stop closes the guard and kills the kernel, giving its memory back at
// once (a benchmark starts many). The test's end does it too.
func (f *Frontend) Stop() {
	f.stopped.Do(func() {
		f.G.Close()
		f.P.Kill()
	})
}

// Header is the raw execute_request header of cell id.
func Header(id string) []byte {
	return []byte(`{"msg_id":"` + id + `","msg_type":"execute_request"}`)
}

// Cell sends command to grow.py as cell id, reported to the guard as the
// proxy does: requested, started, counted.
func (f *Frontend) Cell(t testing.TB, id, command string) {
	t.Helper()
	f.G.CellRequested(id, Header(id), command+"\nsecond line")
	f.G.CellStarted(id)
	f.G.ExecutionCount(id, len(f.G.Cells()))
	f.P.Send(t, command)
}

// Finish waits for the command's last word and reports the cell idle; the
// guard's ledger, read at once as guardctl run does, must have the cell's
// end measurement. It returns the word's line.
func (f *Frontend) Finish(t testing.TB, id, word string) []string {
	t.Helper()
	out := f.P.Expect(t, word)
	<-f.G.CellFinished(id)
	if c, _ := f.Ledger(id); c.State != ledger.Done {
		t.Fatalf("cell %s is %s right after its end, want done with its end measurement", id, c.State)
	}
	return out
}

// End waits for the command to end however it ends (done, interrupted,
// memory error), reports the cell idle as Finish does, and returns the
// line.
func (f *Frontend) End(t testing.TB, id string) []string {
	t.Helper()
	for line := range f.P.Lines() {
		if len(line) > 0 && (line[0] == "done" || line[0] == "interrupted" || line[0] == "memory") {
			<-f.G.CellFinished(id)
			return line
		}
	}
	t.Fatalf("grow.py ended while cell %s ran", id)
	return nil
}

// Ledger returns the guard's record of cell id.
func (f *Frontend) Ledger(id string) (ledger.Cell, bool) {
	for _, c := range f.G.Cells() {
		if c.MsgID == id {
			return c, true
		}
	}
	return ledger.Cell{}, false
}

// Next waits for the next notice in cell id and checks it contains want.
// It fails if the command ends first: it grew to the end unguarded.
func (f *Frontend) Next(t testing.TB, id, want string) Stream {
	t.Helper()
	for {
		select {
		case s := <-f.streams:
			if s.Parent != string(Header(id)) || s.Name != "stderr" {
				t.Fatalf("posted to %s on %s, want cell %s on stderr", s.Parent, s.Name, id)
			}
			if !strings.Contains(s.Text, want) {
				t.Fatalf("notice lacks %q:\n%s", want, s.Text)
			}
			return s
		case line, ok := <-f.P.Lines():
			if !ok || len(line) > 0 && (line[0] == "done" || line[0] == "interrupted" || line[0] == "memory") {
				t.Fatalf("the cell ended (%v) while a notice with %q was awaited", line, want)
			}
		}
	}
}

// Frozen waits until every process of the kernel's tree is stopped (SIGSTOP
// lands asynchronously) and returns the tree.
func (f *Frontend) Frozen(t testing.TB) []int {
	t.Helper()
	tree, err := proctree.Descendants(f.P.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		running, err := freeze.Running(tree)
		if err != nil {
			t.Fatal(err)
		}
		if len(running) == 0 {
			return tree
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil)
	}
	t.Fatalf("tree %v of the paused kernel is not stopped", tree)
	return nil
}
