package supervisor

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// Supervisor runs one guarded kernel.
type Supervisor struct {
	cfg   Config
	proxy *proxy.Proxy
	guard *guard.Guard

	shutdown chan shutdownRequest // from the control channel
	actions  chan action          // from guardctl, through the control socket
	signals  chan os.Signal
	cpu      *proctree.CPUMeter // the kernel's CPU use between usage_requests
	usage    *usageDesk

	mu         sync.Mutex
	started    time.Time
	proc       *child.Process // nil while no child runs
	ready      bool           // the child answers
	busy       bool           // the child's last status was busy
	deaths     []time.Time    // recent deaths, for the death-loop rule
	deathCount int
	// deathCauses counts the deaths by diagnosis.Cause, for guardctl metrics.
	deathCauses map[string]int
	// unready counts the children in a row that ended before they answered
	// (see startBackoff).
	unready int
	gaveUp  *report // set when restarts stopped after a death loop
	// startFailure is why the last kernel died before it answered, until
	// one answers: what requests get meanwhile.
	startFailure *report
	nextCell     *report  // a death while idle, told in the next cell
	execCount    int      // the last execution_count the kernel announced
	witness      *witness // the current child's
	// interrupted is the last interrupt passed to a kernel.
	interrupted interruptSent
	// infoWaiters asked a kernel that died for kernel_info.
	infoWaiters []*proxy.Request
	// byClient: restarts are the client's (config.RestartClient), and the
	// proxy ends with its kernel; ended is then what Run returns.
	byClient bool
	ended    error
}

type interruptSent struct {
	pid     int
	at      time.Time
	byGuard bool
}

type shutdownRequest struct {
	req     *proxy.Request
	restart bool
}

type action int

const actionRestart action = iota

// Run serves until the kernel is shut down or the proxy is told to stop.
func Run(cfg Config) error {
	s := &Supervisor{
		cfg:         cfg,
		shutdown:    make(chan shutdownRequest, 1),
		actions:     make(chan action, 1),
		signals:     make(chan os.Signal, 4),
		started:     time.Now(),
		cpu:         proctree.NewCPUMeter(),
		deathCauses: map[string]int{},
	}
	// Go exits on SIGINT unless told otherwise; for a kernel SIGINT means
	// "interrupt the cell".
	signal.Notify(s.signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(s.signals)

	if s.cfg.Debug == nil {
		s.cfg.Debug = log.New(io.Discard, "", 0)
	}
	// A limit or threshold that cannot be honoured stops the kernel here.
	g, err := guard.New(cfg.Guard, voice{s}, cfg.Log)
	if err != nil {
		return err
	}
	s.guard = g
	defer g.Close()
	s.byClient = restartsOf(cfg.Guard.Restart) == config.RestartClient
	// jupyter-guard's server extension sets this in the Jupyter server's
	// environment, which the kernels it starts inherit.
	g.SetPanel(os.Getenv("JUPYTER_GUARD_PANEL") != "")
	g.SetUnattended(headless(cfg.Guard.Headless))
	s.announce()
	pool := g.Budget().TensorPool()
	if env := tensorPoolEnv(pool); env != nil {
		s.cfg.Env = append(s.cfg.Env, env...)
		g.SetTensorPool(pool)
		s.cfg.Debug.Printf("memory guard: TensorFlow's CPU allocator is held to %v", env)
	}
	// The first usage_request then has the host's CPU use since now to
	// report, not nothing (psutil's first cpu_percent() is meaningless).
	if _, err := s.cpu.Host(); err != nil {
		cfg.Log.Printf("host CPU: %v", err)
	}

	s.usage = newUsageDesk(s.measureUsage, s.reply, cfg.Log.Printf)
	p, err := proxy.Listen(cfg.Conn, s, cfg.Log)
	if err != nil {
		return err
	}
	s.proxy = p
	defer p.Close()
	stopUsage := make(chan struct{})
	defer close(stopUsage) // before p.Close: its replies go through the proxy
	go s.usage.serve(stopUsage)

	// The proxy's private directory, which only this user can enter, holds
	// the child's connection file (with the key), the Python hook it runs
	// and the unix sockets it listens on (unless the table says it cannot);
	// nothing of the kernel's goes into a runtime dir others might write. A
	// directory someone planted stops the kernel here. Only after Listen: a
	// second proxy on the same connection file fails there, before it could
	// take (and at its end remove) the first one's directory.
	var lock *os.File
	privDir, err := privDirPath(cfg.RuntimeDir, cfg.Conn.Key, cfg.ConnFile)
	if err == nil {
		lock, err = lockPrivDir(privDir)
	}
	if err != nil {
		return err
	}
	defer func() {
		os.RemoveAll(privDir)
		lock.Close()
	}()
	sweepPrivDirs(filepath.Dir(privDir), privDir)
	sockDir := privDir
	if why := tcpOnly(cfg.Argv); why != "" {
		cfg.Log.Printf("the kernel listens on loopback tcp ports, not on unix sockets: %s", why)
		sockDir = ""
	}
	checkRuntimeDir(cfg.RuntimeDir, cfg.Log)
	noteStrayFiles(cfg.RuntimeDir, control.KernelID(cfg.ConnFile), cfg.Log)

	ctl, err := control.Listen(controlPath(s), s, cfg.Log)
	if err != nil {
		cfg.Log.Printf("guardctl will not see this kernel: %v", err)
	} else {
		defer ctl.Close()
	}

	// Named after the kernel: its path is in the child's command line, where
	// tools (and the tests) find which kernel a process belongs to.
	childConnFile := filepath.Join(privDir, "kernel-"+control.KernelID(cfg.ConnFile)+".json")
	if env, err := installPyHook(privDir); err != nil {
		cfg.Log.Printf("a crash will not show the Python stack, and ipykernel's IOPub pipe stays on a loopback tcp port: %v", err)
	} else {
		s.cfg.Env = append(s.cfg.Env, env...)
		if sockDir != "" {
			s.cfg.Env = append(s.cfg.Env, "JUPYTER_GUARD_IOPUB_PIPE=ipc://"+filepath.Join(sockDir, pipeName))
		}
	}
	if cfg.Keeper != nil {
		if k, err := child.StartKeeper(cfg.Keeper); err != nil {
			cfg.Log.Printf("the kernel's own processes may outlive a killed proxy: %v", err)
		} else {
			defer k.Close()
			s.cfg.Env = append(s.cfg.Env, k.Env)
		}
	}
	go s.watchParent()

	for {
		if stop := s.runChild(childConnFile, sockDir); stop {
			return s.ended
		}
		if stop := s.waitToRestart(); stop {
			return nil
		}
	}
}

// announce writes the start-up lines: the budget, and why no GPU memory is
// measured. They are for debugging (guardctl status shows the budget),
// unless the user must act: a limit the guard may not see, a GPU it
// cannot measure where one could be expected.
func (s *Supervisor) announce() {
	b := s.guard.Budget()
	budget := s.cfg.Debug.Printf
	if b.Figure == ledger.Host && b.Detected.Unseen != "" {
		budget = s.cfg.Log.Printf
	}
	budget("memory guard: %v (%s), measured on %s; action %s%s", b.Budget, b.Source, b.Figure, actionOf(b), b.CeilingNote())
	if b.Unattended {
		s.cfg.Debug.Printf("memory guard: headless: nobody can answer a pause, so none is made")
	}
	s.cfg.Debug.Printf("a kernel that dies is restarted by the %s", map[bool]string{true: "client (the proxy ends with it)", false: "proxy"}[s.byClient])
	if why, expected := s.guard.NoGPU(); expected {
		s.cfg.Log.Printf("memory guard: no GPU memory is measured: %s", why)
	} else if why != "" {
		s.cfg.Debug.Printf("memory guard: no GPU memory is measured: %s", why)
	}
}

// runChild starts one child, listening in sockDir ("": on tcp), and serves
// it until it exits. It reports whether the proxy should stop.
func (s *Supervisor) runChild(connFile, sockDir string) (stop bool) {
	if s.gaveUpReport() != nil {
		return s.waitAfterGivingUp()
	}
	w := newWitness()
	defer w.close()
	ci, err := childConnection(s.cfg.Conn, connFile, sockDir)
	var proc *child.Process
	if err == nil {
		stdout, stderr, fault := w.outputs()
		proc, err = child.Start(child.Spec{
			Argv:   childArgv(s.cfg.Argv, s.cfg.ConnFile, connFile, s.cfg.ResourceDir),
			Env:    childEnv(s.cfg.Env),
			Stdout: stdout,
			Stderr: stderr,
			Extra:  []io.Writer{fault}, // faultFD: faulthandler's report joins stderr
		})
	}
	if err != nil {
		return s.failedStart(fmt.Errorf("the kernel could not be started: %w", err))
	}
	w.started(proc.Pid)
	s.guard.Attach(proc.Pid)
	defer s.guard.Detach()
	s.mu.Lock()
	s.proc, s.ready, s.busy, s.execCount, s.witness = proc, false, false, 0, w
	s.mu.Unlock()
	return s.serve(proc, ci, w)
}

// serve attaches the proxy to a started child and waits for its end.
func (s *Supervisor) serve(proc *child.Process, ci kernelspec.ConnectionInfo, w *witness) (stop bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attached := make(chan error, 1)
	go func() { attached <- s.proxy.Attach(ctx, ci, s.guard.Ready) }()

	var deadline <-chan time.Time
	var sd *shutdownRequest
	restarting := false
	for {
		select {
		case err := <-attached:
			if err != nil {
				if ctx.Err() == nil {
					s.cfg.Log.Printf("kernel pid %d: %v", proc.Pid, err)
				}
				continue
			}
			w.ready(proc.Pid, s.cfg.Log.Printf)
			s.guard.SetInterruptEnds(s.kernelInfo().interruptEnds(s.cfg.InterruptMode))
			s.guard.SetRefusalLoses(s.kernelInfo().refusalLoses())
			s.mu.Lock()
			s.ready, s.unready, s.startFailure = true, 0, nil
			waiters := s.infoWaiters
			s.infoWaiters = nil
			s.mu.Unlock()
			for _, r := range waiters {
				s.reply(r, s.proxy.KernelInfo())
			}
			if s.deathCount > 0 {
				s.publish(nil, "status", map[string]string{"execution_state": "idle"})
			}
		case <-proc.Exited():
			cancel()
			if sd == nil {
				// The shutdown_request the child exited for is queued before
				// it is forwarded, but select picks among ready cases at
				// random: CI once recorded such a shutdown as a death.
				select {
				case req := <-s.shutdown:
					sd = &req
				default:
				}
			}
			switch {
			case sd != nil:
				s.finishShutdown(proc, *sd)
				return true
			case restarting:
				s.restarted()
				return false
			}
			return s.died(proc, w)
		case req := <-s.shutdown:
			sd = &req
			// ipykernel exits on its own after shutdown_reply; jupyter_client
			// gives it 5 s in all before it kills the proxy's group.
			deadline = time.After(3 * time.Second)
		case <-deadline:
			s.guard.Thaw()
			proc.Stop(time.Second)
		case a := <-s.actions:
			if a == actionRestart && !restarting {
				restarting = true
				s.guard.Thaw()
				go proc.Stop(2 * time.Second)
			}
		case sig := <-s.signals:
			switch sig {
			case syscall.SIGINT:
				s.interrupt(proc, false)
			case syscall.SIGTERM, syscall.SIGHUP:
				cancel()
				s.proxy.Detach(0)
				s.guard.Thaw()
				proc.Stop(2 * time.Second)
				return true
			}
		}
	}
}

// waitAfterGivingUp serves no kernel after a death loop until the user
// shuts down or restarts.
func (s *Supervisor) waitAfterGivingUp() (stop bool) {
	for {
		select {
		case sd := <-s.shutdown:
			s.finishShutdown(nil, sd)
			return true
		case <-s.actions:
			s.mu.Lock()
			// The restart asked for is the answer to the last death's
			// notice: the next cell must not repeat that the restarts
			// stopped.
			s.gaveUp, s.deaths, s.nextCell = nil, nil, nil
			s.mu.Unlock()
			s.proxy.Hold()
			return false
		case sig := <-s.signals:
			if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				return true
			}
		}
	}
}

// restarted closes what a kernel stopped on request left open.
func (s *Supervisor) restarted() {
	pending, busy := s.proxy.Detach(time.Second)
	s.mu.Lock()
	s.proc = nil
	s.mu.Unlock()
	rep := &report{Ename: "KernelRestarted", Evalue: "The kernel was restarted (guardctl restart): the variables of this session are lost."}
	rep.Traceback = []string{"jupyter-guard: " + rep.Evalue}
	s.closeRequests(pending, busy, running(pending, busy), 0, rep, false)
	s.publish(nil, "status", map[string]string{"execution_state": "starting"})
}

func (s *Supervisor) currentProc() *child.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// finishShutdown ends a shutdown: the child's own shutdown_reply has been
// forwarded if it sent one; otherwise the proxy answers for it.
func (s *Supervisor) finishShutdown(proc *child.Process, sd shutdownRequest) {
	pending, _ := s.proxy.Detach(time.Second)
	answered := proc != nil
	for _, r := range pending {
		if r.MsgID == sd.req.MsgID {
			answered = false
		}
	}
	if !answered {
		s.reply(sd.req, map[string]any{"status": "ok", "restart": sd.restart})
	}
	if proc != nil {
		proc.Stop(time.Second)
	}
	letRepliesLeave()
}

// letRepliesLeave gives the last replies that each frontend's writer may
// still hold (the shutdown_reply, a death's notice) time to leave before
// the sockets close.
func letRepliesLeave() { time.Sleep(100 * time.Millisecond) }
