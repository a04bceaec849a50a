package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/jupyter-guard/jupyter-guard/child"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// Shutdown timing, from jupyter_client's shutdown_wait_time (5 s): half of
// it for the kernel to exit after shutdown_request, the other half after
// SIGTERM, then SIGKILL.
const (
	exitWait       = 2500 * time.Millisecond
	terminateGrace = 2500 * time.Millisecond
)

// LaunchOptions say where and how to start a kernel.
type LaunchOptions struct {
	// RuntimeDir receives the connection file; "" is Jupyter's runtime
	// directory.
	RuntimeDir string
	// Dir is the kernel's working directory; "" is ours.
	Dir string
	// Env is added, as KEY=VALUE, after our environment and the
	// kernelspec's env.
	Env []string
	// Prefix fills {prefix} in argv: the sys.prefix of the Python
	// environment Jupyter would run in.
	Prefix string
	// Stdout and Stderr receive the kernel's own output; nil discards it.
	Stdout, Stderr io.Writer
}

// Kernel is a kernel process Launch started, with a client connected to
// it. Shutdown must be called to stop it.
type Kernel struct {
	Spec     *kernelspec.KernelSpec
	ConnFile string
	Conn     kernelspec.ConnectionInfo
	Client   *Client

	proc   *child.Process
	stderr *tail
}

// Launch starts the kernel spec describes, as jupyter_client's
// KernelManager does: a connection file (mode 0600) with free ports, the
// argv placeholders filled, the kernelspec's env merged into ours, its own
// process group, JPY_PARENT_PID set. It returns once the kernel answers
// (see Dial), or with an error that includes the end of the kernel's
// stderr if it exited first.
func Launch(ctx context.Context, spec *kernelspec.KernelSpec, opts LaunchOptions) (*Kernel, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("kernelspec %s: argv is empty", spec.Name)
	}
	runtimeDir, err := kernelspec.MakeRuntimeDir(opts.RuntimeDir)
	if err != nil {
		return nil, err
	}
	ci, err := newConnection(spec.Name)
	if err != nil {
		return nil, err
	}
	connFile := filepath.Join(runtimeDir, "kernel-"+uuid.NewString()+".json")
	if err := ci.Write(connFile); err != nil {
		return nil, err
	}
	k := &Kernel{Spec: spec, ConnFile: connFile, Conn: ci, stderr: &tail{}}
	argv := kernelArgv(spec.Argv, map[string]string{
		"connection_file": connFile,
		"resource_dir":    spec.Dir,
		"prefix":          opts.Prefix,
	})
	stderr := io.Writer(k.stderr)
	if opts.Stderr != nil {
		stderr = io.MultiWriter(opts.Stderr, k.stderr)
	}
	env := kernelEnv(spec.Env, opts.Env)
	k.proc, err = child.Start(child.Spec{
		Argv:   argv,
		Env:    append(env, "JPY_PARENT_PID="+strconv.Itoa(os.Getpid())),
		Dir:    opts.Dir,
		Stdout: opts.Stdout,
		Stderr: stderr,
	})
	if err != nil {
		os.Remove(connFile)
		return nil, fmt.Errorf("kernel %s: %w", spec.Name, err)
	}
	if k.Client, err = k.connect(ctx); err != nil {
		k.stop(context.Background())
		return nil, fmt.Errorf("kernel %s: %w", spec.Name, err)
	}
	return k, nil
}

// errExited ends a connection attempt to a kernel that is gone.
var errExited = errors.New("the kernel exited")

// connect dials the kernel, giving up when it exits.
func (k *Kernel) connect(ctx context.Context) (*Client, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-k.proc.Exited():
			cancel(errExited)
		case <-ctx.Done():
		}
	}()
	c, err := Dial(ctx, k.Conn)
	if errors.Is(err, errExited) {
		k.proc.DrainOutput(time.Second)
		return nil, fmt.Errorf("it exited while starting (%s)%s", k.ExitStatus(), k.stderr.quote())
	}
	return c, err
}

// Pid is the kernel process's id, also its process group's.
func (k *Kernel) Pid() int { return k.proc.Pid }

// ExitStatus says how the kernel process ended ("exit status 1", "signal:
// killed"), or "running".
func (k *Kernel) ExitStatus() string {
	select {
	case <-k.proc.Exited():
		return k.proc.State().String()
	default:
		return "running"
	}
}

// Interrupt interrupts the kernel the way its kernelspec asks: SIGINT to
// its process group, or an interrupt_request for interrupt_mode message.
func (k *Kernel) Interrupt(ctx context.Context) error {
	if k.Spec.Interrupt() == "message" {
		return k.Client.Interrupt(ctx)
	}
	if err := k.proc.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt kernel %s: %w", k.Spec.Name, err)
	}
	return nil
}

// Shutdown stops the kernel so that nothing is left behind: it asks with
// shutdown_request, waits a while for the process to exit, then sends
// SIGTERM and finally SIGKILL to its whole process group, and removes the
// connection file. ctx bounds the polite part only; the kernel is always
// stopped.
func (k *Kernel) Shutdown(ctx context.Context) error {
	defer k.Client.Close()
	return k.stop(ctx)
}

func (k *Kernel) stop(ctx context.Context) error {
	if k.Client != nil && k.Client.Err() == nil {
		ctx, cancel := context.WithTimeout(ctx, exitWait)
		if k.Client.Shutdown(ctx, false) == nil {
			select {
			case <-k.proc.Exited():
			case <-ctx.Done():
			}
		}
		cancel()
	}
	k.proc.Stop(terminateGrace)
	if err := os.Remove(k.ConnFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove connection file: %w", err)
	}
	return nil
}

// tail keeps the last bytes a kernel wrote to stderr, to explain a kernel
// that failed to start.
type tail struct {
	mu sync.Mutex
	b  []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = t.b[len(t.b)-tailSize:]
	}
	return len(p), nil
}

// quote renders the kept stderr for an error message, "" when empty.
func (t *tail) quote() string {
	t.mu.Lock()
	s := strings.TrimSpace(string(t.b))
	t.mu.Unlock()
	if s == "" {
		return ""
	}
	return ":\n" + s
}
