package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
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
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	connFile := fs.String("f", "", "Jupyter's connection file")
	interruptMode := fs.String("interrupt-mode", "signal", "the wrapped kernel's interrupt_mode: signal or message")
	resourceDir := fs.String("resource-dir", "", "the wrapped kernelspec's directory, for a {resource_dir} Jupyter left in the argv")
	config.RegisterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: guardctl kernel -f CONNECTION_FILE [options] -- KERNEL_ARGV...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitCode(2)
	}
	argv := fs.Args()
	switch {
	case *connFile == "":
		return errors.New("-f CONNECTION_FILE is required")
	case len(argv) == 0:
		return errors.New("no kernel to run: give its command after --")
	case *interruptMode != "signal" && *interruptMode != "message":
		return fmt.Errorf("--interrupt-mode %q: use signal or message", *interruptMode)
	}
	// A bad setting stops the kernel here, with the reason in Jupyter's log,
	// rather than letting it run unguarded.
	guardCfg, err := config.Load(os.Getenv, fs)
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
