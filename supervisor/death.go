package supervisor

import (
	"encoding/json"
	"fmt"
	"slices"
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
// to restart. Where restarts are the client's (byClient), the proxy ends
// with a kernel that had answered, as a plain kernel's process would.
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
	s.mu.Lock()
	ev.Unanswered, ev.Argv = !s.ready, s.cfg.Argv
	s.mu.Unlock()
	ev.Ceiling = s.guard.CeilingReached()
	ev.TensorPool = s.guard.TensorPool()
	d := s.diagnose(ev)
	s.cfg.Log.Printf("kernel pid %d died: %s", proc.Pid, d.Evalue)
	s.recordDeath(d)
	rep := &report{Ename: diagnosis.Ename, Evalue: d.Evalue, Traceback: d.Traceback}
	count := 0
	if ev.Cell != nil {
		count = ev.Cell.ExecutionCount
	}
	switch {
	case s.byClient && ev.Unanswered:
		return s.cannotStart(pending, busy, run, rep)
	case s.byClient:
		return s.endWithKernel(run, rep, ev.Exit)
	}
	return s.afterDeath(pending, busy, run, count, rep, ev.Unanswered)
}

// endWithKernel ends the proxy after the death of a kernel whose restarts
// are the client's: the running cell gets the diagnosis as an error
// output, and nothing else is answered, as when a plain kernel dies. The
// client then finds the kernel's process gone (nbclient raises
// DeadKernelError) with the diagnosis already in the cell.
func (s *Supervisor) endWithKernel(run *proxy.Request, rep *report, exit diagnosis.ExitStatus) (stop bool) {
	if run != nil {
		s.publish(run.Header, "error", map[string]any{"ename": rep.Ename, "evalue": rep.Evalue, "traceback": rep.Traceback})
		letRepliesLeave()
	}
	status := exit.Code
	if exit.Signal != 0 {
		status = 128 + int(exit.Signal) // as a shell reports it
	}
	s.ended = KernelEnded{Status: status}
	return true
}

// cannotStart answers every request, now and until the client shuts the
// proxy down, with why the kernel could not start: a kernel_info_reply
// (wait_for_ready returns), and each cell the reason (nbclient fails with
// it), where a plain kernel's client would only learn that it "died before
// replying to kernel_info".
func (s *Supervisor) cannotStart(pending, busy []*proxy.Request, run *proxy.Request, rep *report) (stop bool) {
	s.mu.Lock()
	s.gaveUp = rep
	s.mu.Unlock()
	s.closeRequests(pending, busy, run, 0, rep, true)
	s.proxy.GiveUp()
	s.answerInfoWaiters(rep)
	s.publish(nil, "status", map[string]string{"execution_state": "dead"})
	return false
}

// KernelEnded is what Run returns when the proxy ended with its kernel
// (config.RestartClient): Status is the exit status to end with, the
// kernel's own (128+n for signal n).
type KernelEnded struct{ Status int }

func (e KernelEnded) Error() string { return fmt.Sprintf("the kernel ended (status %d)", e.Status) }

// failedStart handles a kernel that could not even be started.
func (s *Supervisor) failedStart(err error) (stop bool) {
	pending, busy := s.proxy.Detach(0)
	s.cfg.Log.Print(err)
	next := "jupyter-guard will try again."
	switch {
	case s.byClient:
		next = "jupyter-guard does not try again: fix the kernelspec, then start the kernel again."
		s.countDeath()
	case !s.countDeath():
		next = fmt.Sprintf("jupyter-guard stopped trying after %d attempts: fix the kernelspec, then restart the kernel.", len(s.deaths))
	}
	s.recordDeath(diagnosis.Diagnosis{Cause: diagnosis.CauseStart, Evalue: err.Error(),
		Evidence: diagnosis.Evidence{KernelID: control.KernelID(s.cfg.ConnFile)}})
	rep := &report{Ename: diagnosis.Ename, Evalue: err.Error(),
		Traceback: []string{"jupyter-guard: the kernel could not be started", err.Error(), "", next}}
	if s.byClient {
		return s.cannotStart(pending, busy, running(pending, busy), rep)
	}
	return s.afterDeath(pending, busy, running(pending, busy), 0, rep, true)
}

// diagnose counts the death first, so the message can say whether the
// kernel is restarted or the restarts stopped.
func (s *Supervisor) diagnose(ev diagnosis.Evidence) diagnosis.Diagnosis {
	restart := s.countDeath()
	ev.Restart = diagnosis.Restart{GaveUp: !restart, Deaths: len(s.deaths), Window: s.cfg.Guard.RestartWindow, ByClient: s.byClient}
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
// announces the next kernel. unanswered says the kernel never answered.
// The notice that the restarts stopped repeats the last death when no
// cell was told of it.
func (s *Supervisor) afterDeath(pending, busy []*proxy.Request, run *proxy.Request, count int, rep *report, unanswered bool) (stop bool) {
	gaveUp := len(s.deaths) > s.cfg.Guard.MaxRestarts
	s.mu.Lock()
	if gaveUp {
		s.gaveUp = &report{Ename: rep.Ename, Evalue: fmt.Sprintf(
			"This request was not run: the kernel died %d times within %s and jupyter-guard stopped restarting it.",
			len(s.deaths), units.FormatDuration(s.cfg.Guard.RestartWindow))}
		s.gaveUp.Traceback = []string{"jupyter-guard: " + s.gaveUp.Evalue,
			"The last death is explained in the cell it happened in, and in the log. Fix the cause, then restart the kernel from the Kernel menu."}
		if run == nil {
			s.gaveUp.Traceback = append([]string{"jupyter-guard: " + s.gaveUp.Evalue, "The last death:", ""}, rep.Traceback...)
		}
	}
	if run == nil && !unanswered {
		s.nextCell = rep // told in the next cell the user runs
	}
	last := s.gaveUp
	if unanswered && !gaveUp {
		// Until a kernel answers, every request is told why none does,
		// rather than wait for a start that may fail again.
		s.startFailure, last = rep, rep
	}
	s.mu.Unlock()
	s.closeRequests(pending, busy, run, count, rep, unanswered)
	if last != nil { // no kernel answers those waiting for one
		s.proxy.GiveUp()
		s.answerInfoWaiters(last)
	}
	// As jupyter_server says when its restarter gives up: no kernel comes.
	state := "starting"
	if gaveUp {
		state = "dead"
	}
	s.publish(nil, "status", map[string]string{"execution_state": state})
	return false
}

// answerInfoWaiters answers the kernel_info requests that wait for a kernel
// with rep.
func (s *Supervisor) answerInfoWaiters(rep *report) {
	s.mu.Lock()
	waiters := s.infoWaiters
	s.infoWaiters = nil
	s.mu.Unlock()
	for _, r := range waiters {
		s.fail(r, rep, 0, false)
	}
}

// running is the execute request the kernel was running when it died: the
// one it announced busy, else the oldest one waiting (a crash can beat the
// kernel's busy message to the wire).
func running(pending, busy []*proxy.Request) *proxy.Request {
	for _, r := range busy {
		if r.Kind == wire.ExecuteRequest && slices.Contains(pending, r) {
			return r
		}
	}
	for _, r := range pending { // in arrival order
		if r.Kind == wire.ExecuteRequest {
			return r
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
	if r.Cell != nil {
		c.Code = r.Cell.Code
		if n := r.Cell.Count(); n > 0 {
			c.ExecutionCount = n
		}
	}
	return c
}

// closeRequests answers every request the dead kernel left open, so no cell
// keeps spinning: run gets rep, the cells queued behind it a short note.
// A kernel_info request waits for the next kernel, unless the kernel died
// before it answered (unanswered): then it gets rep at once, so a
// frontend sends its cell, which is told why.
func (s *Supervisor) closeRequests(pending, busy []*proxy.Request, run *proxy.Request, count int, rep *report, unanswered bool) {
	queued := &report{Ename: rep.Ename, Evalue: "The kernel died before this cell ran."}
	queued.Traceback = []string{"jupyter-guard: " + queued.Evalue}
	for _, r := range pending {
		announced := slices.Contains(busy, r)
		switch {
		case r.Kind == wire.KernelInfoRequest && unanswered:
			s.fail(r, rep, 0, !announced)
		case r.Kind == wire.KernelInfoRequest:
			// Frontends wait for kernel_info to know a kernel is ready: the
			// next kernel answers it.
			s.mu.Lock()
			s.infoWaiters = append(s.infoWaiters, r)
			s.mu.Unlock()
		case r == run:
			s.fail(r, rep, count, !announced)
		case r.Kind == wire.ExecuteRequest:
			s.fail(r, queued, 0, !announced)
		default:
			s.fail(r, rep, 0, !announced)
		}
	}
	for _, r := range busy {
		if !slices.Contains(pending, r) { // answered, and left busy
			s.publish(r.Header, "status", map[string]string{"execution_state": "idle"})
		}
	}
}

// fail ends a request with rep (answer), then says idle. announce
// publishes busy first, for requests no kernel saw.
func (s *Supervisor) fail(r *proxy.Request, rep *report, count int, announce bool) {
	if announce {
		s.publish(r.Header, "status", map[string]string{"execution_state": "busy"})
	}
	s.answer(r, rep, count)
	s.publish(r.Header, "status", map[string]string{"execution_state": "idle"})
}

// answer ends request r with rep: its error output for a cell, then the
// error reply.
func (s *Supervisor) answer(r *proxy.Request, rep *report, count int) {
	if r.Kind == wire.ExecuteRequest {
		s.publish(r.Header, "error", map[string]any{"ename": rep.Ename, "evalue": rep.Evalue, "traceback": rep.Traceback})
	}
	content := rep.errorContent(count)
	if r.Kind == wire.KernelInfoRequest {
		s.asKernelInfo(content, rep)
	}
	s.reply(r, content)
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
