// Command guardctl runs and steers jupyter-guard: the kernel proxy that
// Jupyter launches, the kernelspec installer, and the tools to see and
// control guarded kernels.
package main

import (
	"errors"
	"fmt"
	"io"
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
	args := os.Args[1:]
	if len(args) == 0 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch args[0] {
	case "-h", "--help":
		usage(os.Stdout)
		return
	case "help":
		os.Exit(help(args[1:]))
	case "--version", "version":
		fmt.Println("guardctl", version)
		return
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "guardctl: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(exitStatus(c, c.run(args[1:])))
}

// help is "guardctl help [COMMAND]": the command's own --help.
func help(args []string) int {
	if len(args) == 0 {
		usage(os.Stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok || c.hidden {
		fmt.Fprintf(os.Stderr, "guardctl help: no command %q\n\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return exitStatus(c, c.run([]string{"--help"}))
}

// exitStatus tells the user what a command's error was, unless the command
// has already said it, and picks the exit status.
func exitStatus(c command, err error) int {
	if err == nil {
		return 0
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(os.Stderr, "guardctl %s: %v\n", c.name, err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "guardctl — a Jupyter kernel proxy that tracks memory, pauses before the OOM killer and explains kernel deaths.")
	fmt.Fprintln(w, "\nUsage: guardctl COMMAND [options] [ARGS]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nguardctl help COMMAND (or guardctl COMMAND --help) shows a command's options; guardctl --version its version.")
}
