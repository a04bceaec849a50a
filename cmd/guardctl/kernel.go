package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/supervisor"
)

func init() {
	register(command{
		name:    "kernel",
		summary: "run a kernel under the guard (what a guarded kernel.json launches)",
		run:     runKernel,
	})
}

func runKernel(args []string) error {
	// jupyter_client 8.10 interrupts a kernel before it shuts it down, and
	// a shutdown right after the start sent the SIGINT before the
	// supervisor took it over: Go's default ended the proxy (CI saw exit
	// -2). Until then there is no cell to interrupt; supervisor.Run's
	// Notify takes SIGINT back.
	signal.Ignore(syscall.SIGINT)
	// The proxy works a few microseconds per message between waits on its
	// sockets. With more than one P, the runtime wakes an idle thread for
	// nearly every message it readies, and those wake-ups cost more CPU
	// than the work: one P took 90-110 µs off each execute
	// (docs/performance.md). GOMAXPROCS in the environment still decides.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	cl := newCmdline("kernel", "-- KERNEL_ARGV...", "Runs the kernel KERNEL_ARGV under the guard, as the proxy between Jupyter and it: what a guarded kernel.json launches. The guard's settings come from these options, else from the environment.", 0, -1)
	cl.firstArgEnds = true // KERNEL_ARGV has options of its own
	connFile := cl.String("f", "", "Jupyter's connection `FILE`")
	interruptMode := cl.String("interrupt-mode", "signal", "the wrapped kernel's interrupt_mode, `MODE`: signal or message")
	resourceDir := cl.String("resource-dir", "", "the wrapped kernelspec's `DIR`, for a {resource_dir} Jupyter left in the argv")
	config.RegisterFlags(cl.FlagSet)
	argv, err := cl.parse(args)
	if err != nil {
		return err
	}
	switch {
	case *connFile == "":
		return cl.fail("-f CONNECTION_FILE is required")
	case len(argv) == 0:
		return cl.fail("no kernel to run: give its command after --")
	case *interruptMode != "signal" && *interruptMode != "message":
		return cl.fail("--interrupt-mode %q: use signal or message", *interruptMode)
	}
	// A bad setting stops the kernel here, with the reason in Jupyter's log,
	// rather than letting it run unguarded.
	guardCfg, err := config.Load(os.Getenv, cl.FlagSet)
	if err != nil {
		return fmt.Errorf("not starting the kernel: %w", err)
	}
	ci, err := kernelspec.ReadConnectionFile(*connFile)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*connFile)
	if err != nil {
		return err
	}
	runtimeDir, err := kernelspec.MakeRuntimeDir("")
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "jupyter-guard: ", log.Ltime)
	var debug *log.Logger
	if on, _ := strconv.ParseBool(os.Getenv("JUPYTER_GUARD_DEBUG")); on {
		debug = log.New(os.Stderr, "jupyter-guard: debug: ", log.Ltime)
	}
	err = supervisor.Run(supervisor.Config{
		ConnFile:      abs,
		Conn:          ci,
		Argv:          argv,
		ResourceDir:   *resourceDir,
		InterruptMode: *interruptMode,
		RuntimeDir:    runtimeDir,
		Keeper:        keeperArgv(),
		Guard:         guardCfg,
		Log:           logger,
		Debug:         debug,
	})
	// Ended with its kernel, whose death is in the log already: the
	// kernel's own status, as a plain kernel's process would end.
	var ended supervisor.KernelEnded
	if errors.As(err, &ended) {
		return exitCode(ended.Status)
	}
	return err
}
