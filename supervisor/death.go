package supervisor

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/proxy"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// report is what the notebook is told about a death.
type report struct {
	Ename     string
	Evalue    string
	Traceback []string
}

func (r *report) text() string {
	return r.Evalue + "\n" + strings.Join(r.Traceback, "\n") + "\n"
}

func (r *report) errorContent(execCount int) map[string]any {
	c := map[string]any{"status": "error", "ename": r.Ename, "evalue": r.Evalue, "traceback": r.Traceback}
	if execCount > 0 {
		c["execution_count"] = execCount
	}
	return c
}

// died handles a child that exited without being asked to (proc nil: it
// could not be started). It closes what the child left open, tells the
// notebook, and decides whether to restart.
func (s *Supervisor) died(proc *child.Process, startErr error) (stop bool) {
	pending, busy := s.proxy.Detach(time.Second)
	s.mu.Lock()
	s.proc = nil
	s.deathCount++
	s.mu.Unlock()
	var rep report
	if proc != nil {
		proc.DrainOutput(500 * time.Millisecond)
		rep = describeExit(proc.State())
		s.cfg.Log.Printf("kernel pid %d died: %s", proc.Pid, rep.Evalue)
	} else {
		rep = report{Ename: "KernelDied", Evalue: startErr.Error()}
		s.cfg.Log.Print(startErr)
	}
	if s.recordDeath() {
		rep.Traceback = append(rep.Traceback, "", "jupyter-guard is restarting the kernel: the variables of this session are lost.")
	} else {
		rep.Traceback = append(rep.Traceback, "",
			fmt.Sprintf("The kernel died %d times within %s, so jupyter-guard stopped restarting it.", s.cfg.Guard.MaxRestarts, s.cfg.Guard.RestartWindow),
			"Fix the cause above, then restart the kernel from the Kernel menu.")
		s.mu.Lock()
		s.gaveUp = &rep
		s.mu.Unlock()
	}
	told := s.closeRequests(pending, busy, &rep)
	if !told {
		s.mu.Lock()
		s.nextCell = &rep
		s.mu.Unlock()
	}
	if s.gaveUpReport() == nil {
		s.publish(nil, "status", map[string]string{"execution_state": "starting"})
	}
	return false
}

// recordDeath counts a death and reports whether to restart.
func (s *Supervisor) recordDeath() bool {
	now := time.Now()
	recent := s.deaths[:0]
	for _, t := range s.deaths {
		if now.Sub(t) < s.cfg.Guard.RestartWindow {
			recent = append(recent, t)
		}
	}
	s.deaths = append(recent, now)
	return len(s.deaths) < s.cfg.Guard.MaxRestarts
}

// closeRequests answers every request the dead kernel left open, so no cell
// keeps spinning, and reports whether a cell was told about the death.
func (s *Supervisor) closeRequests(pending []proxy.Request, busy [][]byte, rep *report) (told bool) {
	running := ""
	for _, raw := range busy {
		if h, err := wire.DecodeHeader(raw); err == nil && h.MsgType == "execute_request" {
			running = h.MsgID
		}
	}
	idle := map[string][]byte{}
	for _, raw := range busy {
		if h, err := wire.DecodeHeader(raw); err == nil {
			idle[h.MsgID] = raw
		}
	}
	for _, r := range pending {
		switch r.MsgType {
		case "execute_request":
		case "kernel_info_request":
			// Frontends wait for kernel_info to know a kernel is ready: the
			// next kernel answers it.
			s.mu.Lock()
			s.infoWaiters = append(s.infoWaiters, r)
			s.mu.Unlock()
			continue
		default:
			s.reply(r, rep.errorContent(0))
			continue
		}
		if !told && (running == "" || running == r.MsgID) {
			told = true
			s.fail(r, rep, false)
		} else {
			s.fail(r, &report{Ename: "KernelDied", Evalue: "The kernel died before this cell ran."}, false)
		}
		delete(idle, r.MsgID)
	}
	for _, raw := range idle {
		s.publish(raw, "status", map[string]string{"execution_state": "idle"})
	}
	return told
}

// fail ends a request with rep: the error in the cell's output, the reply,
// and idle. announce publishes busy first, for requests the kernel never saw.
func (s *Supervisor) fail(r proxy.Request, rep *report, announce bool) {
	if announce {
		s.publish(r.Header, "status", map[string]string{"execution_state": "busy"})
	}
	s.mu.Lock()
	n := s.execCount
	s.mu.Unlock()
	if r.MsgType == "execute_request" {
		s.publish(r.Header, "error", map[string]any{"ename": rep.Ename, "evalue": rep.Evalue, "traceback": rep.Traceback})
		s.reply(r, rep.errorContent(n))
	} else {
		s.reply(r, rep.errorContent(0))
	}
	s.publish(r.Header, "status", map[string]string{"execution_state": "idle"})
}

// describeExit says how the kernel process ended.
func describeExit(st *os.ProcessState) report {
	rep := report{Ename: "KernelDied"}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		rep.Evalue = fmt.Sprintf("The kernel died: it was killed by signal %s (%s).", signalName(ws.Signal()), ws.Signal())
	default:
		rep.Evalue = fmt.Sprintf("The kernel died: it exited with status %d.", st.ExitCode())
	}
	rep.Traceback = []string{"jupyter-guard: kernel died", rep.Evalue}
	return rep
}

func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGTERM: "SIGTERM",
		syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
