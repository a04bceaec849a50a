package child

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Spec says how to start a kernel.
type Spec struct {
	Argv []string
	Env  []string // full environment, as for exec.Cmd.Env
	Dir  string
	// Stdout and Stderr receive what the kernel writes; nil discards it.
	Stdout, Stderr io.Writer
	// Extra are more outputs, passed to the kernel as fds 3, 4, …
	Extra []io.Writer
}

// Process is one running kernel.
type Process struct {
	Pid     int
	Started time.Time

	cmd    *exec.Cmd
	exited chan struct{}
	copies sync.WaitGroup
}

// Start launches the kernel in its own process group with SIGKILL as its
// parent-death signal.
func Start(s Spec) (*Process, error) {
	if len(s.Argv) == 0 {
		return nil, errors.New("no kernel command to run")
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = s.Env
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Process{cmd: cmd, exited: make(chan struct{})}

	// Our own pipes rather than exec's copying: exec.Cmd.Wait would also wait
	// for grandchildren that inherited them, and a death must be seen at once.
	outputs := append([]io.Writer{s.Stdout, s.Stderr}, s.Extra...)
	readers := make([]*os.File, 0, len(outputs))
	writers := make([]*os.File, 0, len(outputs))
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for range outputs {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(readers)
			closeAll(writers)
			return nil, fmt.Errorf("kernel output pipe: %w", err)
		}
		readers, writers = append(readers, r), append(writers, w)
	}
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = writers[0], writers[1], writers[2:]
	err := spawn(cmd)
	closeAll(writers)
	if err != nil {
		closeAll(readers)
		return nil, fmt.Errorf("start kernel %q: %w", s.Argv[0], err)
	}
	p.Pid = cmd.Process.Pid
	p.Started = time.Now()
	for i, r := range readers {
		p.pump(r, outputs[i])
	}
	go func() {
		_ = cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

func (p *Process) pump(r *os.File, w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	p.copies.Add(1)
	go func() {
		defer p.copies.Done()
		defer r.Close()
		_, _ = io.Copy(w, r)
	}()
}

// Exited is closed when the kernel process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State is the exit status; valid once Exited is closed.
func (p *Process) State() *os.ProcessState { return p.cmd.ProcessState }

// DrainOutput waits, at most d, until the kernel's output pipes are closed,
// so the last lines it wrote before dying can be read.
func (p *Process) DrainOutput(d time.Duration) {
	done := make(chan struct{})
	go func() { p.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// Signal sends sig to the kernel's whole process group, as jupyter_client
// does for a kernel it launched itself.
func (p *Process) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// Stop asks the kernel to end with SIGTERM, then SIGKILLs its process group
// after grace, and waits until it is reaped. Whatever is left in the group
// (workers that outlived the kernel) is killed too, so nothing stays behind.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.exited:
	default:
		_ = p.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.exited
}
