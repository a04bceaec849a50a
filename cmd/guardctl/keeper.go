package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/child"
)

// The keeper: started by each proxy, it ends the kernel's processes once the
// proxy is gone (child.Keep). Not for people to run.
func init() {
	register(command{name: "keeper", hidden: true, run: runKeeper})
}

// keeperArgv runs this very binary's keeper: a guardctl found on PATH could
// be another version.
func keeperArgv() []string {
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	return []string{exe, "keeper"}
}

// runKeeper is "keeper MARKER", started by the proxy, which hands on to a
// detached "keeper --detached MARKER" and ends.
func runKeeper(args []string) error {
	proxy := os.NewFile(3, "proxy")
	switch {
	case len(args) == 1:
		return child.Detach(append(keeperArgv(), "--detached", args[0]), proxy)
	case len(args) == 2 && args[0] == "--detached":
		// A ^C or a TERM meant for the notebook server must not end it first.
		signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM)
		killed, err := child.Keep(proxy, args[1])
		if killed > 0 {
			fmt.Fprintf(os.Stderr, "jupyter-guard: the proxy is gone: ended %d process(es) the kernel left running\n", killed)
		}
		return err
	}
	return errors.New("usage: guardctl keeper MARKER (started by the kernel proxy, with the proxy's pipe as fd 3)")
}
