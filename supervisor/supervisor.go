package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// Supervisor runs one guarded kernel.
type Supervisor struct {
	cfg   Config
	proxy *proxy.Proxy

	shutdown chan shutdownRequest // from the control channel
	signals  chan os.Signal

	mu        sync.Mutex
	proc      *child.Process // nil while no child runs
	deaths    []time.Time
	gaveUp    *report // set when restarts stopped after a death loop
	nextCell  *report // a death while idle, told in the next cell
	execCount int     // the last execution_count the kernel announced
}

type shutdownRequest struct {
	req     proxy.Request
	restart bool
}

// Run serves until the kernel is shut down or the proxy is told to stop.
func Run(cfg Config) error {
	s := &Supervisor{
		cfg:      cfg,
		shutdown: make(chan shutdownRequest, 1),
		signals:  make(chan os.Signal, 4),
	}
	// Go exits on SIGINT unless told otherwise; for a kernel SIGINT means
	// "interrupt the cell".
	signal.Notify(s.signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(s.signals)

	p, err := proxy.Listen(cfg.Conn, s, cfg.Log)
	if err != nil {
		return err
	}
	s.proxy = p
	defer p.Close()

	childConnFile := filepath.Join(cfg.RuntimeDir, "guard-child-"+kernelID(cfg.ConnFile)+".json")
	defer os.Remove(childConnFile)
	go s.watchParent()

	for {
		stop := s.runChild(childConnFile)
		if stop {
			return nil
		}
	}
}

// runChild starts one child and serves it until it exits. It reports
// whether the proxy should stop.
func (s *Supervisor) runChild(connFile string) (stop bool) {
	if s.gaveUp == nil {
		ci, err := childConnection(s.cfg.Conn, connFile)
		var proc *child.Process
		if err == nil {
			proc, err = child.Start(child.Spec{
				Argv:   childArgv(s.cfg.Argv, s.cfg.ConnFile, connFile, s.cfg.ResourceDir),
				Env:    childEnv(s.cfg.Env),
				Stdout: os.Stdout,
				Stderr: os.Stderr,
			})
		}
		if err != nil {
			return s.died(nil, nil, fmt.Errorf("the kernel could not be started: %w", err))
		}
		s.setProc(proc)
		return s.serve(proc, ci)
	}
	// Restarts have stopped: wait for the user to shut down or restart.
	for {
		select {
		case sd := <-s.shutdown:
			s.finishShutdown(nil, sd)
			return true
		case sig := <-s.signals:
			if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				return true
			}
		}
	}
}

// serve attaches the proxy to a started child and waits for its end.
func (s *Supervisor) serve(proc *child.Process, ci kernelspec.ConnectionInfo) (stop bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attached := make(chan error, 1)
	go func() { attached <- s.proxy.Attach(ctx, ci) }()

	var deadline <-chan time.Time
	var sd *shutdownRequest
	for {
		select {
		case err := <-attached:
			if err != nil && ctx.Err() == nil {
				s.cfg.Log.Printf("kernel pid %d: %v", proc.Pid, err)
			}
		case <-proc.Exited():
			cancel()
			if sd != nil {
				s.finishShutdown(proc, *sd)
				return true
			}
			return s.died(proc, ctx, nil)
		case req := <-s.shutdown:
			sd = &req
			// ipykernel exits on its own after shutdown_reply; jupyter_client
			// gives it 5 s in all before it kills the proxy's group.
			deadline = time.After(3 * time.Second)
		case <-deadline:
			proc.Stop(time.Second)
		case sig := <-s.signals:
			switch sig {
			case syscall.SIGINT:
				s.interrupt(proc)
			case syscall.SIGTERM, syscall.SIGHUP:
				cancel()
				s.proxy.Detach(0)
				proc.Stop(2 * time.Second)
				return true
			}
		}
	}
}

func (s *Supervisor) setProc(p *child.Process) {
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
}

func (s *Supervisor) currentProc() *child.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// interrupt delivers one SIGINT to the kernel's process group.
func (s *Supervisor) interrupt(proc *child.Process) {
	if err := proc.Signal(syscall.SIGINT); err != nil {
		s.cfg.Log.Printf("interrupt kernel pid %d: %v", proc.Pid, err)
	}
}

// finishShutdown ends a shutdown: the child's own shutdown_reply has been
// forwarded if it sent one; otherwise the proxy answers for it.
func (s *Supervisor) finishShutdown(proc *child.Process, sd shutdownRequest) {
	pending, _ := s.proxy.Detach(time.Second)
	for _, r := range pending {
		if r.MsgID == sd.req.MsgID {
			_ = s.proxy.Reply(r, map[string]any{"status": "ok", "restart": sd.restart})
		}
	}
	if proc != nil {
		proc.Stop(time.Second)
	}
	// zmq4 has no linger: give the last replies time to leave.
	time.Sleep(100 * time.Millisecond)
}

// watchParent stops the proxy when the process that launched it (Jupyter)
// is gone, as ipykernel does with JPY_PARENT_PID.
func (s *Supervisor) watchParent() {
	want := os.Getppid()
	for range time.Tick(time.Second) {
		if os.Getppid() != want {
			s.signals <- syscall.SIGTERM
			return
		}
	}
}

// kernelID is the id in Jupyter's connection file name, kernel-<id>.json.
func kernelID(connFile string) string {
	base := strings.TrimSuffix(filepath.Base(connFile), ".json")
	return strings.TrimPrefix(base, "kernel-")
}
