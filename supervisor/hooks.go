package supervisor

import (
	"bytes"
	"encoding/json"

	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// FromFrontend steers the requests the proxy cannot just pass on.
func (s *Supervisor) FromFrontend(req *proxy.Request, m *wire.Message) bool {
	switch ch := req.Channel; {
	case ch == wire.Control && req.Kind == wire.ShutdownRequest:
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
	case ch == wire.Control && req.Kind == wire.InterruptRequest:
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
	case ch == wire.Control && req.Kind == wire.UsageRequest:
		// Answered for every kernel, dead or paused ones too, and never
		// passed on: ipykernel would answer a second time.
		s.usage.ask(req)
		return false
	}
	if rep := s.gaveUpReport(); rep != nil && req.Channel != wire.Stdin {
		if info := s.proxy.KernelInfo(); req.Kind == wire.KernelInfoRequest && info != nil {
			s.reply(req, info) // what the kernel was; its cells will say it is gone
		} else {
			s.fail(req, rep, 0, true)
		}
		return false
	}
	if req.Cell != nil {
		var c struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(m.Content, &c)
		req.Cell.Code = c.Code
		s.guard.CellRequested(req.MsgID, req.Header, c.Code)
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
func (s *Supervisor) FromKernel(ch wire.Channel, m *wire.Message, h wire.Header, asked *proxy.Request, state string) (wait <-chan struct{}) {
	if state != "" {
		s.mu.Lock()
		s.busy = state == "busy"
		s.mu.Unlock()
	}
	var cell *proxy.Cell // of the execute request m belongs to
	if asked != nil {
		cell = asked.Cell
	}
	switch {
	case cell == nil:
		if ch == wire.IOPub && h.Kind == wire.Stream {
			s.heardStream(m.Content)
		}
	case state == "busy":
		s.guard.CellStarted(asked.MsgID)
	case state == "idle":
		// The idle goes once the cell's notes and the guard's word on its
		// end are in the cell: frontends drop what comes after it.
		wait = allClosed(s.cellNotes(asked), s.guard.CellFinished(asked.MsgID))
		s.awaitReply(asked)
	case ch == wire.Shell && h.Kind == wire.ExecuteReply:
		// A kernel at its ceiling may fail to format its own traceback
		// (IPython's first parses every frame's source: 5-10 MiB): it
		// prints why to stderr and sends no error output, only the reply.
		if !cell.Erred() && bytes.Contains(m.Content, []byte(`"error"`)) {
			if e, ok := decodeError(m.Content); ok {
				s.checkMemoryError(asked, e)
			}
		}
	case h.Kind == wire.Stream:
		if text, ok := s.heardStream(m.Content); ok {
			s.checkGPUError(asked, text)
			s.checkMemoryStream(asked, text)
		}
	case h.Kind == wire.Error:
		cell.SetErred()
		if e, ok := decodeError(m.Content); ok {
			s.checkGPUError(asked, e.text())
			s.checkMemoryError(asked, e)
		}
	case h.Kind == wire.ExecuteInput:
		if n, ok := wire.ExecutionCount(m.Content); ok {
			s.mu.Lock()
			s.execCount = n
			s.mu.Unlock()
			cell.SetCount(n)
			s.guard.ExecutionCount(asked.MsgID, n)
		}
	}
	return wait
}

// heardStream passes a stream message's text to the current child's
// witness, and returns it.
func (s *Supervisor) heardStream(content []byte) (text string, ok bool) {
	name, text, ok := streamText(content)
	if ok {
		s.heard(name, text)
	}
	return text, ok
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

func (s *Supervisor) reply(r *proxy.Request, content any) {
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
func (s *Supervisor) Unserved(r *proxy.Request) {
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
