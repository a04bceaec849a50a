// Command guardctl runs and steers jupyter-guard: the kernel proxy that
// Jupyter launches, the kernelspec installer, and the tools to see and
// control guarded kernels.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
)

// command is one guardctl subcommand. Each lives in its own file and adds
// itself with register, so subcommands stay independent of each other.
type command struct {
	name    string
	summary string
	run     func(args []string) error
	hidden  bool // not in the usage: run by guardctl itself
}

var commands = map[string]command{}

// version is set at build time (-ldflags "-X main.version=..."), from
// pyproject.toml when the wheel is built; a plain go build says "dev".
var version = "dev"

func register(c command) { commands[c.name] = c }

// exitCode lets a subcommand choose its exit status after it has already
// told the user what went wrong.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		return
	}
	if os.Args[1] == "--version" || os.Args[1] == "version" {
		fmt.Println("guardctl", version)
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "guardctl: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := c.run(os.Args[2:]); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		fmt.Fprintf(os.Stderr, "guardctl %s: %v\n", c.name, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "guardctl — a Jupyter kernel proxy that tracks memory, pauses before the OOM killer and explains kernel deaths.")
	fmt.Fprintln(os.Stderr, "\nUsage: guardctl COMMAND [options] | guardctl --version\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, commands[n].summary)
	}
}
