package supervisor

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// report is what the notebook is told about a death.
type report struct {
	Ename     string
	Evalue    string
	Traceback []string
}

func (r *report) text() string { return strings.Join(r.Traceback, "\n") + "\n" }

func (r *report) errorContent(execCount int) map[string]any {
	c := map[string]any{"status": "error", "ename": r.Ename, "evalue": r.Evalue, "traceback": r.Traceback}
	if execCount > 0 {
		c["execution_count"] = execCount
	}
	return c
}

// died handles a child that exited without being asked to: it closes what
// the child left open, tells the notebook why it died, and decides whether
// to restart.
func (s *Supervisor) died(proc *child.Process, w *witness) (stop bool) {
	pending, busy := s.proxy.Detach(time.Second)
	proc.DrainOutput(500 * time.Millisecond) // the last words of the crash
	run := running(pending, busy)
	ev := w.evidence(proc.Pid, proc.State(), nil)
	ev.KernelID = control.KernelID(s.cfg.ConnFile)
	ev.Cell = s.cellOf(run)
	ev.Memory = s.memoryStory(ev.Cell)
	ev.GPUDriver = s.guard.GPUDriver().String()
	info := s.kernelInfo()
	ev.Kernel, ev.Language = info.name(), info.LanguageInfo.Name
	ev.Interrupt = s.interruptBefore(proc.Pid)
	ev.Ceiling = s.guard.CeilingReached()
	d := s.diagnose(ev)
	s.cfg.Log.Printf("kernel pid %d died: %s", proc.Pid, d.Evalue)
	s.recordDeath(d)
	rep := &report{Ename: diagnosis.Ename, Evalue: d.Evalue, Traceback: d.Traceback}
	count := 0
	if ev.Cell != nil {
		count = ev.Cell.ExecutionCount
	}
	return s.afterDeath(pending, busy, run, count, rep)
}

// failedStart handles a kernel that could not even be started.
func (s *Supervisor) failedStart(err error) (stop bool) {
	pending, busy := s.proxy.Detach(0)
	s.cfg.Log.Print(err)
	next := "jupyter-guard will try again."
	if !s.countDeath() {
		next = fmt.Sprintf("jupyter-guard stopped trying after %d attempts: fix the kernelspec, then restart the kernel.", len(s.deaths))
	}
	s.recordDeath(diagnosis.Diagnosis{Cause: diagnosis.CauseStart, Evalue: err.Error(),
		Evidence: diagnosis.Evidence{KernelID: control.KernelID(s.cfg.ConnFile)}})
	rep := &report{Ename: diagnosis.Ename, Evalue: err.Error(),
		Traceback: []string{"jupyter-guard: the kernel could not be started", err.Error(), "", next}}
	return s.afterDeath(pending, busy, running(pending, busy), 0, rep)
}

// diagnose counts the death first, so the message can say whether the
// kernel is restarted or the restarts stopped.
func (s *Supervisor) diagnose(ev diagnosis.Evidence) diagnosis.Diagnosis {
	restart := s.countDeath()
	ev.Restart = diagnosis.Restart{GaveUp: !restart, Deaths: len(s.deaths), Window: s.cfg.Guard.RestartWindow}
	return diagnosis.Diagnose(ev)
}

// countDeath records a death of the current child and reports whether to
// restart: MaxRestarts restarts are allowed within RestartWindow, as
// jupyter_client's restart_limit counts them.
func (s *Supervisor) countDeath() (restart bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || !s.ready { // it never answered, or never started
		s.unready++
	}
	s.proc = nil
	s.deathCount++
	now := time.Now()
	recent := s.deaths[:0]
	for _, t := range s.deaths {
		if now.Sub(t) < s.cfg.Guard.RestartWindow {
			recent = append(recent, t)
		}
	}
	s.deaths = append(recent, now)
	return len(s.deaths) <= s.cfg.Guard.MaxRestarts
}

// afterDeath closes the dead kernel's requests, telling run (the cell that
// was running, if any) the whole story, and unless the restarts stopped,
// announces the next kernel.
func (s *Supervisor) afterDeath(pending []proxy.Request, busy [][]byte, run *proxy.Request, count int, rep *report) (stop bool) {
	gaveUp := len(s.deaths) > s.cfg.Guard.MaxRestarts
	s.mu.Lock()
	if gaveUp {
		s.gaveUp = &report{Ename: rep.Ename, Evalue: fmt.Sprintf(
			"This request was not run: the kernel died %d times within %s and jupyter-guard stopped restarting it.",
			len(s.deaths), units.FormatDuration(s.cfg.Guard.RestartWindow))}
		s.gaveUp.Traceback = []string{"jupyter-guard: " + s.gaveUp.Evalue,
			"The last death is explained in the cell it happened in, and in the log. Fix the cause, then restart the kernel from the Kernel menu."}
	}
	if run == nil {
		s.nextCell = rep // told in the next cell the user runs
	}
	last := s.gaveUp
	s.mu.Unlock()
	s.closeRequests(pending, busy, run, count, rep)
	if gaveUp { // no next kernel will answer those waiting for one
		s.proxy.GiveUp()
		s.mu.Lock()
		waiters := s.infoWaiters
		s.infoWaiters = nil
		s.mu.Unlock()
		for _, r := range waiters {
			s.fail(r, last, 0, false)
		}
	}
	// As jupyter_server says when its restarter gives up: no kernel comes.
	state := "starting"
	if gaveUp {
		state = "dead"
	}
	s.publish(nil, "status", map[string]string{"execution_state": state})
	return false
}

// running is the execute request the kernel was running when it died: the
// one it announced busy, else the oldest one waiting (a crash can beat the
// kernel's busy message to the wire).
func running(pending []proxy.Request, busy [][]byte) *proxy.Request {
	for _, raw := range busy {
		h, err := wire.DecodeHeader(raw)
		if err != nil || h.MsgType != "execute_request" {
			continue
		}
		for i := range pending {
			if pending[i].MsgID == h.MsgID {
				return &pending[i]
			}
		}
	}
	for i := range pending { // in arrival order
		if pending[i].MsgType == "execute_request" {
			return &pending[i]
		}
	}
	return nil
}

// cellOf describes request r for the diagnosis. A cell whose execute_input
// never arrived got the next execution count.
func (s *Supervisor) cellOf(r *proxy.Request) *diagnosis.Cell {
	if r == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &diagnosis.Cell{ExecutionCount: s.execCount + 1}
	if info := s.cells[r.MsgID]; info != nil {
		c.Code = info.code
		if info.execCount > 0 {
			c.ExecutionCount = info.execCount
		}
	}
	return c
}

// closeRequests answers every request the dead kernel left open, so no cell
// keeps spinning: run gets rep, the cells queued behind it a short note.
func (s *Supervisor) closeRequests(pending []proxy.Request, busy [][]byte, run *proxy.Request, count int, rep *report) {
	idle := map[string][]byte{}
	for _, raw := range busy {
		if h, err := wire.DecodeHeader(raw); err == nil {
			idle[h.MsgID] = raw
		}
	}
	queued := &report{Ename: rep.Ename, Evalue: "The kernel died before this cell ran."}
	queued.Traceback = []string{"jupyter-guard: " + queued.Evalue}
	for _, r := range pending {
		_, announced := idle[r.MsgID]
		delete(idle, r.MsgID)
		switch {
		case r.MsgType == "kernel_info_request":
			// Frontends wait for kernel_info to know a kernel is ready: the
			// next kernel answers it.
			s.mu.Lock()
			s.infoWaiters = append(s.infoWaiters, r)
			s.mu.Unlock()
		case run != nil && r.MsgID == run.MsgID:
			s.fail(r, rep, count, !announced)
		case r.MsgType == "execute_request":
			s.fail(r, queued, 0, !announced)
		default:
			s.fail(r, rep, 0, !announced)
		}
	}
	for _, raw := range idle {
		s.publish(raw, "status", map[string]string{"execution_state": "idle"})
	}
}

// fail ends a request with rep: for a cell, the error in its output and the
// reply; then idle. announce publishes busy first, for requests no kernel saw.
func (s *Supervisor) fail(r proxy.Request, rep *report, count int, announce bool) {
	if announce {
		s.publish(r.Header, "status", map[string]string{"execution_state": "busy"})
	}
	if r.MsgType == "execute_request" {
		s.publish(r.Header, "error", map[string]any{"ename": rep.Ename, "evalue": rep.Evalue, "traceback": rep.Traceback})
	}
	content := rep.errorContent(count)
	if r.MsgType == "kernel_info_request" {
		s.asKernelInfo(content, rep)
	}
	s.reply(r, content)
	s.publish(r.Header, "status", map[string]string{"execution_state": "idle"})
}

// asKernelInfo makes an error reply a kernel_info_reply a client can read:
// jupyter_client takes protocol_version from every one (KeyError without
// it), frontends the language. They are the kernel's last answer's, else
// the wrapped kernelspec's.
func (s *Supervisor) asKernelInfo(content map[string]any, rep *report) {
	content["protocol_version"] = wire.Protocol
	content["implementation"] = "jupyter-guard"
	content["implementation_version"] = ""
	content["banner"] = rep.Evalue
	var last struct {
		LanguageInfo json.RawMessage `json:"language_info"`
	}
	if json.Unmarshal(s.proxy.KernelInfo(), &last) == nil && last.LanguageInfo != nil {
		content["language_info"] = last.LanguageInfo
		return
	}
	lang := map[string]string{"name": ""}
	if spec, err := kernelspec.ReadSpec(s.cfg.ResourceDir); err == nil {
		lang["name"] = spec.Language
	}
	content["language_info"] = lang
}

// interruptBefore is the interrupt passed to kernel pid within
// diagnosis.InterruptWindow, if any.
func (s *Supervisor) interruptBefore(pid int) *diagnosis.Interrupt {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.interrupted
	if in.pid != pid || time.Since(in.at) > diagnosis.InterruptWindow {
		return nil
	}
	return &diagnosis.Interrupt{At: in.at, ByGuard: in.byGuard}
}
