package supervisor

import (
	"io"
	"os"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
)

// witness gathers, while one child lives, what its death diagnosis needs:
// the kernel log from its start, the tail of its output, and its cgroup's
// OOM-kill counter before anything happened.
type witness struct {
	kmsg           *diagnosis.KmsgWatcher
	stdout, stderr *diagnosis.Tail
	group          *cgroup.Group // the kernel's memory cgroup, if its OOM counter can be read
	oomBefore      diagnosis.OOMCounter
	// cgroup is the kernel's memory cgroup (nil: none), for whether the
	// cgroup is the kernel's own (Supervisor.memoryState).
	cgroup   *cgroup.Group
	captured []*capturedOutput // the kernel's own stdout/stderr pipes
	// heardOut and heardErr take the stream messages' text (heard).
	heardOut, heardErr io.Writer
}

// newWitness opens the kernel log before the child exists, so every record
// about it is read.
func newWitness() *witness {
	kmsg, _ := diagnosis.NewKmsgWatcher() // unreadable (as in most containers): no kernel-log evidence
	w := &witness{
		kmsg:   kmsg,
		stdout: diagnosis.NewTail(64<<10, 1000),
		stderr: diagnosis.NewTail(64<<10, 1000),
	}
	w.heardOut, w.heardErr = w.stdout.Source(), w.stderr.Source()
	return w
}

// outputs tee the child's output to the proxy's own (Jupyter's log shows
// what it always showed) and into the tails; fault is a second writer of
// stderr, for faulthandler's own pipe. Each writer of a tail is a Source of
// its own, so their lines do not tear into each other.
func (w *witness) outputs() (stdout, stderr, fault io.Writer) {
	return w.tee(1), w.tee(2), w.tee(2)
}

// tee is a new writer of the child's fd (1 or 2) into the proxy's own and
// into its tail.
func (w *witness) tee(fd int) io.Writer {
	if fd == 1 {
		return io.MultiWriter(os.Stdout, w.stdout.Source())
	}
	return io.MultiWriter(os.Stderr, w.stderr.Source())
}

// ready starts the output tails afresh once the kernel answers: its
// start-up chatter (ipykernel's warning about tcp) is not what a later
// death left behind. A kernel that dies while starting keeps it all.
// It also takes hold of the pipes the kernel now reads its own output
// from (see capturedOutput).
func (w *witness) ready(pid int, logf func(string, ...any)) {
	w.stdout.Reset()
	w.stderr.Reset()
	for _, fd := range []int{1, 2} {
		c, err := holdCaptured(pid, fd, w.tee(fd))
		if err != nil {
			logf("a crash's last output may be lost: %v", err)
		}
		if c != nil {
			w.captured = append(w.captured, c)
		}
	}
}

// heard keeps the text of a small stream message in the tail of its
// stream: what a kernel printed through Python before it crashed reaches
// the notebook this way, not through the kernel's own stdout and stderr.
func (w *witness) heard(name, text string) {
	switch name {
	case "stdout":
		w.heardOut.Write([]byte(text))
	case "stderr":
		w.heardErr.Write([]byte(text))
	}
}

// started reads the OOM-kill counter of the child's memory cgroup.
func (w *witness) started(pid int) {
	g, err := cgroup.Discover(pid)
	if err != nil {
		return
	}
	w.cgroup = g
	if st, err := g.OOM(); err == nil {
		w.group = g
		w.oomBefore = diagnosis.OOMCounter{Known: true, Before: st.Kills}
	}
}

// evidence collects what is known once the child is dead.
func (w *witness) evidence(pid int, ps *os.ProcessState, treePIDs []int) diagnosis.Evidence {
	for _, c := range w.captured {
		c.drain()
	}
	w.captured = nil
	oom := w.oomBefore
	if w.group != nil {
		if st, err := w.group.OOM(); err == nil {
			oom.After = st.Kills
		} else {
			oom.Known = false
		}
	}
	return diagnosis.Evidence{
		PID:       pid,
		Exit:      diagnosis.ExitStatusOf(ps),
		OOMKills:  oom,
		KernelLog: w.kmsg.Collect(append([]int{pid}, treePIDs...)),
		Stdout:    w.stdout.Lines(),
		Stderr:    w.stderr.Lines(),
	}
}

func (w *witness) close() {
	for _, c := range w.captured {
		c.file.Close()
	}
	if w.kmsg != nil {
		_ = w.kmsg.Close()
	}
}

// deathLog is where every death is recorded for guardctl, one JSON line each.
func (s *Supervisor) deathLog() diagnosis.DeathLog {
	return diagnosis.NewDeathLog(s.cfg.RuntimeDir + "/jupyter-guard-deaths.jsonl")
}

// recordDeath counts every death by its cause (for guardctl metrics) and
// appends it to the death log.
func (s *Supervisor) recordDeath(d diagnosis.Diagnosis) {
	s.mu.Lock()
	s.deathCauses[string(d.Cause)]++
	s.mu.Unlock()
	if err := s.deathLog().Append(d.Record(time.Now())); err != nil {
		s.cfg.Log.Printf("record the death: %v", err)
	}
}
