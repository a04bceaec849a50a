package supervisor

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// FromFrontend steers the requests the proxy cannot just pass on.
func (s *Supervisor) FromFrontend(ch wire.Channel, m *wire.Message, h wire.Header) bool {
	req := proxy.NewRequest(ch, m, h)
	switch {
	case ch == wire.Control && h.Kind == wire.ShutdownRequest:
		var c struct {
			Restart bool `json:"restart"`
		}
		_ = json.Unmarshal(m.Content, &c)
		s.guard.Thaw() // a stopped kernel cannot shut down
		select {
		case s.shutdown <- shutdownRequest{req: req, restart: c.Restart}:
		default: // one shutdown is under way already
		}
		return s.currentProc() != nil
	case ch == wire.Control && h.Kind == wire.InterruptRequest:
		proc := s.currentProc()
		if s.byMessage() {
			if proc != nil {
				s.noteInterrupt(proc.Pid, false)
			}
			s.guard.Thaw()
			return true // the kernel takes it as a message
		}
		// The wrapped kernel takes interrupts as signals, or its message
		// would only be a signal too (byMessage).
		if proc != nil {
			s.interrupt(proc, false)
		}
		s.reply(req, map[string]any{"status": "ok"})
		return false
	case ch == wire.Control && h.Kind == wire.UsageRequest:
		// Answered for every kernel, dead or paused ones too, and never
		// passed on: ipykernel would answer a second time.
		s.usage.ask(req)
		return false
	}
	if rep := s.gaveUpReport(); rep != nil && ch != wire.Stdin {
		if info := s.proxy.KernelInfo(); h.Kind == wire.KernelInfoRequest && info != nil {
			s.reply(req, info) // what the kernel was; its cells will say it is gone
		} else {
			s.fail(req, rep, 0, true)
		}
		return false
	}
	if h.Kind == wire.ExecuteRequest {
		var c struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(m.Content, &c)
		s.mu.Lock()
		s.cells[h.MsgID] = &cellInfo{code: c.Code, asked: time.Now(), replied: make(chan struct{})}
		s.mu.Unlock()
		s.guard.CellRequested(h.MsgID, m.Header, c.Code)
		if rep := s.takeNextCellReport(); rep != nil {
			if err := s.proxy.Stream(m.Header, "stderr", rep.text()); err != nil {
				s.cfg.Log.Printf("tell the next cell about the kernel's death: %v", err)
			}
		}
	}
	return true
}

// heard passes a stream message's text to the current child's witness.
func (s *Supervisor) heard(name, text string) {
	s.mu.Lock()
	w := s.witness
	s.mu.Unlock()
	if w != nil {
		w.heard(name, text)
	}
}

// streamText decodes a small stream message. Big outputs are not decoded
// on the forwarding path; last words and error reports are short.
func streamText(content []byte) (name, text string, ok bool) {
	if len(content) > 64<<10 {
		return "", "", false
	}
	var c struct{ Name, Text string }
	if json.Unmarshal(content, &c) != nil {
		return "", "", false
	}
	return c.Name, c.Text, true
}

// FromKernel follows the execution count, for replies the proxy must
// write itself when the kernel dies.
func (s *Supervisor) FromKernel(ch wire.Channel, m *wire.Message, h, parent wire.Header, state string) (wait <-chan struct{}) {
	if state != "" {
		s.mu.Lock()
		s.busy = state == "busy"
		s.mu.Unlock()
		if parent.Kind == wire.ExecuteRequest {
			switch state {
			case "busy":
				s.guard.CellStarted(parent.MsgID)
			case "idle":
				// The idle goes once the cell's notes and the guard's word
				// on its end are in the cell: frontends drop what comes
				// after it.
				wait = allClosed(s.cellNotes(parent.MsgID), s.guard.CellFinished(parent.MsgID))
				s.awaitReply(parent.MsgID)
			}
		}
	}
	if ch == wire.Shell && h.Kind == wire.ExecuteReply {
		s.mu.Lock()
		cell := s.cells[parent.MsgID]
		delete(s.cells, parent.MsgID)
		erred := cell == nil || cell.erred
		s.mu.Unlock()
		// A kernel at its ceiling may fail to format its own traceback
		// (IPython's first parses every frame's source: 5-10 MiB): it
		// prints why to stderr and sends no error output, only the reply.
		if !erred && bytes.Contains(m.Content, []byte(`"error"`)) {
			if e, ok := decodeError(m.Content); ok {
				s.checkMemoryError(parent.MsgID, m.Parent, e)
			}
		}
		if cell != nil {
			close(cell.replied)
		}
	}
	if ch == wire.IOPub && h.Kind == wire.Stream {
		if name, text, ok := streamText(m.Content); ok {
			s.heard(name, text)
			if parent.Kind == wire.ExecuteRequest {
				s.checkGPUError(parent.MsgID, m.Parent, text)
				s.checkMemoryStream(parent.MsgID, m.Parent, text)
			}
		}
	}
	if ch == wire.IOPub && h.Kind == wire.Error && parent.Kind == wire.ExecuteRequest {
		s.mu.Lock()
		if cell := s.cells[parent.MsgID]; cell != nil {
			cell.erred = true
		}
		s.mu.Unlock()
		if e, ok := decodeError(m.Content); ok {
			s.checkGPUError(parent.MsgID, m.Parent, e.text())
			s.checkMemoryError(parent.MsgID, m.Parent, e)
		}
	}
	if ch == wire.IOPub && h.Kind == wire.ExecuteInput {
		if n, ok := wire.ExecutionCount(m.Content); ok {
			s.mu.Lock()
			s.execCount = n
			if cell := s.cells[parent.MsgID]; cell != nil {
				cell.execCount = n
			}
			s.mu.Unlock()
			s.guard.ExecutionCount(parent.MsgID, n)
		}
	}
	return wait
}

// allClosed is closed once every one of waits is: nil if none is open.
func allClosed(waits ...<-chan struct{}) <-chan struct{} {
	var open []<-chan struct{}
	for _, w := range waits {
		if w != nil && !isClosed(w) {
			open = append(open, w)
		}
	}
	switch len(open) {
	case 0:
		return nil
	case 1:
		return open[0]
	}
	done := make(chan struct{})
	go func() {
		for _, w := range open {
			<-w
		}
		close(done)
	}()
	return done
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (s *Supervisor) reply(r proxy.Request, content any) {
	if err := s.proxy.Reply(r, content); err != nil {
		s.cfg.Log.Printf("reply to %s: %v", r.MsgType, err)
	}
}

func (s *Supervisor) publish(parent []byte, msgType string, content any) {
	if err := s.proxy.Publish(parent, msgType, content); err != nil {
		s.cfg.Log.Printf("publish %s: %v", msgType, err)
	}
}

func (s *Supervisor) gaveUpReport() *report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gaveUp
}

func (s *Supervisor) startFailureReport() *report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startFailure
}

func (s *Supervisor) takeNextCellReport() *report {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := s.nextCell
	s.nextCell = nil
	return rep
}

// Unserved answers a request that no kernel will see: the restarts
// stopped while it waited for one.
func (s *Supervisor) Unserved(r proxy.Request) {
	rep := s.gaveUpReport()
	if rep == nil {
		rep = s.startFailureReport()
	}
	if rep == nil { // a restart is under way again; ask again
		rep = &report{Ename: diagnosis.Ename, Evalue: "No kernel was running when this request came: try again."}
		rep.Traceback = []string{"jupyter-guard: " + rep.Evalue}
	}
	s.fail(r, rep, 0, true)
}
