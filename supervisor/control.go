package supervisor

import (
	"errors"
	"maps"
	"os"
	"runtime"
	"time"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
)

// errNoKernel answers actions that need a running kernel.
var errNoKernel = errors.New("no kernel is running (it is restarting, or stopped after repeated deaths)")

// State reports the kernel for guardctl status.
func (s *Supervisor) State() control.State {
	st := s.withMemory(s.coreState())
	st.State = s.kernelState()
	return st
}

// kernelState names what the kernel is doing, "paused" while the guard
// holds it stopped. It takes the guard's lock, so the caller must not hold
// s.mu.
func (s *Supervisor) kernelState() string {
	paused := s.guard.Paused()
	s.mu.Lock()
	defer s.mu.Unlock()
	if paused {
		return "paused"
	}
	return s.state()
}

func (s *Supervisor) coreState() control.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := control.State{
		KernelID:    control.KernelID(s.cfg.ConnFile),
		Kernelspec:  s.cfg.Conn.KernelName,
		Notebook:    os.Getenv("JPY_SESSION_NAME"),
		ProxyPID:    os.Getpid(),
		Started:     s.started,
		Deaths:      s.deathCount,
		DeathCauses: maps.Clone(s.deathCauses),
		Proxy:       &control.ProxyRuntime{Goroutines: runtime.NumGoroutine(), FDs: openFDs()},
	}
	if s.proc != nil {
		st.KernelPID = s.proc.Pid
	}
	return st
}

// withMemory adds the guard's figures; it takes the guard's lock, so the
// caller must not hold s.mu.
func (s *Supervisor) withMemory(st control.State) control.State {
	st.Memory, st.LastCell = s.memoryState()
	st.GPU, st.GPUUnknown = s.gpuState()
	st.Actions = s.guard.Actions()
	return st
}

// state names what the kernel is doing; the caller holds s.mu.
func (s *Supervisor) state() string {
	switch {
	case s.gaveUp != nil:
		return "dead"
	case s.proc == nil:
		return "restarting"
	case !s.ready:
		return "starting"
	case s.busy:
		return "busy"
	}
	return "idle"
}

// Cells is the per-cell ledger.
func (s *Supervisor) Cells() []control.Cell { return s.ledgerCells() }

// History is the kernel's memory over the last minutes: each point's own
// figure is the one State shows first (the tree's RSS, or its cgroup's
// working set where that holds only the kernel).
func (s *Supervisor) History() control.History {
	mem, _ := s.memoryState()
	h := control.History{Budget: mem.Budget, Warn: mem.Warn, Pause: mem.Pause, KernelSource: mem.KernelSource, Scope: mem.Scope}
	figure := s.guard.Budget().Figure
	for _, p := range s.guard.History() {
		own := p.Memory.Tree
		if mem.KernelSource == string(ledger.Cgroup) {
			own = p.Memory.Cgroup
		}
		h.Points = append(h.Points, control.Point{At: p.At.UnixMilli(), Kernel: own, Used: p.Memory.Of(figure)})
	}
	if h.Points == nil {
		h.Points = []control.Point{} // [], not null: the panel reads it
	}
	return h
}

// Resume lets a paused kernel continue.
func (s *Supervisor) Resume() error { return s.guard.Resume() }

// Interrupt interrupts the running cell as the notebook's ■ button would.
func (s *Supervisor) Interrupt() error {
	proc := s.currentProc()
	if proc == nil {
		return errNoKernel
	}
	s.interrupt(proc, false)
	return nil
}

// restartBegun bounds how long Restart waits for the old kernel to go: the
// supervisor gives it 2 s before SIGKILL, and guardctl's client 5 s in all.
const restartBegun = 3 * time.Second

// Restart replaces the kernel with a fresh one on the same ports. It
// returns once the old kernel is gone, so that the state guardctl prints
// after it is the restart's, not the state of the kernel being replaced.
func (s *Supervisor) Restart() error {
	old := s.currentProc()
	if old == nil && s.gaveUpReport() == nil {
		return errNoKernel
	}
	select {
	case s.actions <- actionRestart:
	default:
	}
	for deadline := time.Now().Add(restartBegun); s.currentProc() == old && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func openFDs() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	return len(fds)
}

func controlPath(s *Supervisor) string {
	return control.SocketPath(s.cfg.RuntimeDir, control.KernelID(s.cfg.ConnFile))
}
