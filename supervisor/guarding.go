package supervisor

import (
	"errors"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/decide"
	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
	"github.com/jupyter-guard/jupyter-guard/guard/gpu"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/internal/sysio"
)

// voice is how the memory guard speaks through the supervisor: into the
// running cell, and with the notebook's interrupt.
type voice struct{ s *Supervisor }

func (v voice) Stream(parent []byte, name, text string) {
	if err := v.s.proxy.Stream(parent, name, text); err != nil {
		v.s.cfg.Log.Printf("post the guard's notice: %v", err)
	}
}

// Room lets the proxy use raw system calls while the kernel's memory has
// room (package sysio).
func (v voice) Room(ample bool) { sysio.SetRaw(ample) }

func (v voice) Interrupt() {
	if proc := v.s.currentProc(); proc != nil {
		v.s.interrupt(proc, true)
	}
}

// interrupt interrupts a kernel, paused or not, as the wrapped kernelspec
// says. By signal: SIGINT to its process group first, then thaw, so a
// paused cell wakes up to the interrupt instead of to more allocating. By
// message: thaw first, since a stopped kernel answers no message. byGuard
// says it is the guard's own action, for the diagnosis of a kernel that
// dies of it.
func (s *Supervisor) interrupt(proc *child.Process, byGuard bool) {
	if !s.running() {
		// jupyter_client 8.10 interrupts every kernel before it shuts it
		// down. A kernel with nothing running has nothing to lose from
		// that, but one that has not set up its handler yet, or xeus-python
		// at any time, dies of SIGINT: and then the shutdown is a death.
		s.cfg.Debug.Printf("interrupt: no cell is running in kernel pid %d; it is not signalled", proc.Pid)
		s.guard.Thaw()
		return
	}
	s.noteInterrupt(proc.Pid, byGuard)
	if s.byMessage() {
		s.guard.Thaw()
		if err := s.proxy.Request(wire.Control, "interrupt_request", map[string]any{}); err != nil {
			s.cfg.Log.Printf("interrupt kernel pid %d: %v", proc.Pid, err)
		}
		return
	}
	if !s.guard.Paused() || !s.interruptJobs(proc) {
		if err := proc.Signal(syscall.SIGINT); err != nil {
			s.cfg.Log.Printf("interrupt kernel pid %d: %v", proc.Pid, err)
		}
	}
	s.guard.Thaw()
}

// interruptJobs sends SIGINT to the jobs in the foreground of terminals in
// the kernel's tree, as ^C typed there would, and reports whether there
// were any. bash_kernel runs a cell as a job of an interactive bash on a
// pty and, on SIGINT, types ^C into it; but when the tree was paused, bash
// is still taking in that its job was stopped and continued when the ^C
// arrives, and in 4 of 6 tries the job ran on and the cell never ended.
// Signalled directly, while still stopped, the job ends as it wakes (6 of
// 6). The kernel is then not signalled as well: its ^C, typed after the
// job is gone, reached bash at its prompt and spilled into the next cell.
// If the job was not what grew, the cell grows on and the guard stops it
// again.
func (s *Supervisor) interruptJobs(proc *child.Process) bool {
	tree, err := proctree.Descendants(proc.Pid)
	if err != nil {
		s.cfg.Log.Printf("interrupt the terminal jobs of kernel pid %d: %v", proc.Pid, err)
		return false
	}
	sent := false
	for _, g := range proctree.ForegroundGroups(tree, proc.Pid) {
		err := syscall.Kill(-g, syscall.SIGINT)
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			s.cfg.Log.Printf("interrupt the job in process group %d of kernel pid %d: %v", g, proc.Pid, err)
		}
		sent = sent || err == nil
	}
	return sent
}

// byMessage says whether an interrupt must reach the kernel as an
// interrupt_request. A kernelspec in message mode says so, except for an
// ipykernel the guard holds paused: its interrupt_request handler does
// nothing but killpg(SIGINT) on its own process group (ipykernel 6 and 7),
// which the proxy can do while the kernel is still stopped. As a message,
// the kernel must first be thawed to read it, and the paused cell then
// allocates on until it has: under CPU load, long enough for the OOM
// killer (1 run in about 13 with two busy loops beside the tests).
func (s *Supervisor) byMessage() bool {
	if s.cfg.InterruptMode != "message" {
		return false
	}
	return !(s.kernelInfo().Implementation == "ipython" && s.guard.Paused())
}

// memoryStory is the ledger's account of the kernel's memory, for a death
// diagnosis.
func (s *Supervisor) memoryStory(running *diagnosis.Cell) diagnosis.Memory {
	b, counted := s.guard.Budget(), s.guard.Counted()
	m := diagnosis.Memory{Limit: b.Limit, LimitSource: limitSource(b)}
	if c, ok := s.guard.Running(); ok {
		m.TreePeak, m.TreeLast = c.Peak.Tree, c.Last().Tree
		if running != nil {
			running.Start = c.Start.Of(counted)
			running.Peak = c.Peak.Of(counted)
			// What the cell had added when it died is its climb to the
			// peak: the last sample may come from a dying process.
			running.Growth = int64(running.Peak) - int64(running.Start)
			running.Rate = c.Rate
			if !c.Started.IsZero() {
				running.Duration = time.Since(c.Started)
			}
		}
	}
	if u, ok := s.guard.GPU(); ok {
		for _, g := range u.GPUs {
			if g.Used > 0 {
				m.GPUs = append(m.GPUs, diagnosis.GPUMemory{Index: g.Index, Name: g.Name, Used: g.Used, Total: g.MemTotal})
			}
		}
	}
	for _, c := range s.guard.Grew(3) {
		m.TopCells = append(m.TopCells, diagnosis.Cell{ExecutionCount: c.ExecutionCount, Code: c.Code, Growth: c.Growth})
	}
	return m
}

// limitSource says where the budget comes from, for the death notice:
// where the cgroup's limit is set ("cgroup v2 memory.max at /job",
// "MEM_LIMIT"), or what the advice depends on.
func limitSource(b decide.Budget) string {
	switch {
	case b.Figure == ledger.Host:
		return diagnosis.LimitHost
	case b.From == decide.FromSetting:
		return diagnosis.LimitEnv
	}
	return b.Source
}

// ledgerCells is the ledger as guardctl shows it.
func (s *Supervisor) ledgerCells() []control.Cell {
	f := s.guard.Counted()
	cells := s.guard.Cells()
	out := make([]control.Cell, 0, len(cells))
	for _, c := range cells {
		out = append(out, toControlCell(c, f))
	}
	return out
}

func toControlCell(c ledger.Cell, f ledger.Figure) control.Cell {
	return control.Cell{
		ExecutionCount: c.ExecutionCount,
		Code:           c.Code,
		Start:          c.Started,
		End:            c.Finished,
		Running:        c.State == ledger.Running,
		StartBytes:     c.Start.Of(f),
		PeakBytes:      c.Peak.Of(f),
		EndBytes:       c.End.Of(f),
		GrowthBytes:    c.Growth,
		GPUPeakBytes:   c.Peak.GPU,
	}
}

// A status answers with a measurement at most statusMaxAge old: between
// cells the sampler sleeps, and the last one could be minutes old. A new
// one is waited for at most statusWait, then the last one answers (dated).
const (
	statusMaxAge = time.Second
	statusWait   = 250 * time.Millisecond
)

// memoryState is the kernel's memory against its budget, for guardctl.
func (s *Supervisor) memoryState() (control.Memory, *control.Cell) {
	b := s.guard.Budget()
	st := control.Memory{Budget: b.Limit, Warn: b.Warn, Pause: b.Pause, Action: actionOf(b),
		Ceiling: b.Ceiling(), Headless: b.Unattended, LimitSource: b.Source, BudgetFrom: b.From}
	if b.Figure == ledger.Host {
		st.LimitUnseen = b.Detected.Unseen
	}
	var pids []int
	if s.answering() {
		_, pids, _ = s.guard.Fresh(statusMaxAge, statusWait)
	}
	if now, at, ok := s.guard.Memory(); ok {
		st.TreeRSS, st.Cgroup, st.Used, st.MeasuredAt = now.Tree, now.Cgroup, now.Of(b.Figure), at
		st.Kernel, st.KernelSource, st.Scope = now.Tree, string(ledger.Tree), scopeOf(b.Figure)
		if now.Cgroup > 0 && s.ownCgroup(pids) {
			st.Kernel, st.KernelSource = now.Cgroup, string(ledger.Cgroup)
			if b.Figure == ledger.Cgroup {
				st.Scope = control.ScopeKernel
			}
		}
		if b.Limit > 0 {
			st.Share = float64(st.Used) / float64(b.Limit)
			st.KernelShare = float64(st.Kernel) / float64(b.Limit)
		}
	}
	cells := s.guard.Cells()
	if len(cells) == 0 {
		return st, nil
	}
	c := toControlCell(cells[len(cells)-1], s.guard.Counted())
	return st, &c
}

// scopeOf is what a budget's figure measures, as control.Memory.Scope
// names it.
func scopeOf(f ledger.Figure) string {
	switch f {
	case ledger.Host:
		return control.ScopeHost
	case ledger.Cgroup:
		return control.ScopeCgroup
	}
	return control.ScopeKernel
}

// answering tells whether a kernel runs and has answered: one the sampler
// can measure.
func (s *Supervisor) answering() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && s.ready
}

// ownCgroup tells whether the kernel's cgroup holds the kernel's processes
// (pids, its tree) and the proxy, and no others: its working set is then
// the kernel's own figure, page tables and kernel memory included.
func (s *Supervisor) ownCgroup(pids []int) bool {
	s.mu.Lock()
	w := s.witness
	s.mu.Unlock()
	if w == nil || w.cgroup == nil || len(pids) == 0 {
		return false
	}
	own, err := w.cgroup.HoldsOnly(append(slices.Clone(pids), os.Getpid()))
	return err == nil && own
}

// gpuState is the kernel's latest GPU measurement, for guardctl; unknown
// says why its share is not known.
func (s *Supervisor) gpuState() (gpus []control.GPU, unknown string) {
	u, ok := s.guard.GPU()
	if !ok {
		return nil, ""
	}
	if u.PIDsHidden {
		unknown = gpu.HiddenReason
	}
	for _, g := range u.GPUs {
		c := control.GPU{Index: g.Index, Name: g.Name, Used: g.Used, InUse: g.MemUsed, Total: g.MemTotal}
		for _, p := range g.Procs {
			c.PIDs = append(c.PIDs, p.PID)
		}
		gpus = append(gpus, c)
	}
	return gpus, unknown
}

// noteInterrupt remembers an interrupt passed to kernel pid, for the
// diagnosis of a kernel that dies of it.
func (s *Supervisor) noteInterrupt(pid int, byGuard bool) {
	s.mu.Lock()
	s.interrupted = interruptSent{pid: pid, at: time.Now(), byGuard: byGuard}
	s.mu.Unlock()
}

// running tells whether the kernel has something an interrupt could stop:
// it has started, and a cell runs or waits, or it says it is busy.
func (s *Supervisor) running() bool {
	if s.guard.Paused() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready && (s.busy || s.proxy.CellWaiting())
}

// actionOf is the action the guard takes at the pause line, as decide
// takes it: "none" where the ceiling stops a cell nobody can answer a
// pause in.
func actionOf(b decide.Budget) string {
	if a := decide.Action(b); a != "" {
		return string(a)
	}
	return "none"
}
