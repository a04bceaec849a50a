package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// cmdline is one subcommand's command line, read as GNU tools and Jupyter's
// own commands read theirs: --name and -name alike, options before or after
// the arguments ("--" ends the options), help on stdout with exit status
// 0, and a mistake told in one line with the usage line on stderr, exit
// status 2.
type cmdline struct {
	*flag.FlagSet
	cmd   string // "status", as typed after guardctl
	args  string // the arguments in the usage line: "KERNEL", "NOTEBOOK.ipynb"
	about string // what the command does, for its help
	// nargs bounds how many arguments it takes; max < 0 is any number.
	minArgs, maxArgs int
	// firstArgEnds: the options end at the first argument, which starts a
	// command line of its own (guardctl kernel's KERNEL_ARGV).
	firstArgEnds bool
	// pairs are options that take two values, as ipykernel's --env NAME
	// VALUE; they reach the flag as "NAME=VALUE".
	pairs []string
	// longer names a short option's long form ("o": "output"), shown with it.
	longer map[string]string
}

func newCmdline(cmd, args, about string, minArgs, maxArgs int) *cmdline {
	fs := flag.NewFlagSet("guardctl "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse says what was wrong, and where
	fs.Usage = func() {}
	return &cmdline{FlagSet: fs, cmd: cmd, args: args, about: about, minArgs: minArgs, maxArgs: maxArgs}
}

// alias gives the option short a long name too: -o and --output.
func (c *cmdline) alias(short, long string) {
	f := c.Lookup(short)
	c.Var(f.Value, long, f.Usage)
	if c.longer == nil {
		c.longer = map[string]string{}
	}
	c.longer[short] = long
}

// visit calls fn for each option once, leaving out the long forms that
// alias gave.
func (c *cmdline) visit(fn func(*flag.Flag)) {
	long := map[string]bool{}
	for _, l := range c.longer {
		long[l] = true
	}
	c.VisitAll(func(f *flag.Flag) {
		if !long[f.Name] {
			fn(f)
		}
	})
}

// parse reads argv and returns the arguments. After --help it has printed
// the help and returns exitCode(0); after a mistake it has said what was
// wrong and returns exitCode(2): either way the command ends there.
func (c *cmdline) parse(argv []string) ([]string, error) {
	argv, err := c.joinPairs(argv)
	if err != nil {
		return nil, c.fail("%v", err)
	}
	var args []string
	for {
		if err := c.FlagSet.Parse(argv); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.help(os.Stdout)
				return nil, exitCode(0)
			}
			return nil, c.fail("%v", err)
		}
		rest := c.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(argv) - len(rest); c.firstArgEnds || (used > 0 && argv[used-1] == "--") {
			args = append(args, rest...)
			break
		}
		args = append(args, rest[0])
		argv = rest[1:]
	}
	switch {
	case len(args) < c.minArgs:
		return nil, c.fail("missing %s", c.args)
	case c.maxArgs >= 0 && len(args) > c.maxArgs:
		return nil, c.fail("unexpected argument %q", args[c.maxArgs])
	}
	return args, nil
}

// joinPairs turns "--env NAME VALUE" into "--env=NAME=VALUE" for each
// option in pairs.
func (c *cmdline) joinPairs(argv []string) ([]string, error) {
	if len(c.pairs) == 0 {
		return argv, nil
	}
	out := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			return append(out, argv[i:]...), nil
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || strings.Contains(name, "=") || !c.isPair(name) {
			out = append(out, a)
			continue
		}
		if i+2 >= len(argv) {
			return nil, fmt.Errorf("--%s takes two values: --%s NAME VALUE", name, name)
		}
		out = append(out, "--"+name+"="+argv[i+1]+"="+argv[i+2])
		i += 2
	}
	return out, nil
}

func (c *cmdline) isPair(name string) bool {
	for _, p := range c.pairs {
		if p == name {
			return true
		}
	}
	return false
}

// fail tells what was wrong, in one line and the usage line, on stderr.
func (c *cmdline) fail(format string, a ...any) error {
	fmt.Fprintf(os.Stderr, "guardctl %s: %s\n%s\nRun 'guardctl help %s' for its options.\n",
		c.cmd, fmt.Sprintf(format, a...), c.usageLine(), c.cmd)
	return exitCode(2)
}

// usageLine is "Usage: guardctl cells [--json] KERNEL": every option when
// there are few, else [options].
func (c *cmdline) usageLine() string {
	var opts []string
	c.visit(func(f *flag.Flag) { opts = append(opts, "["+optionName(c, f, false)+"]") })
	line := "Usage: guardctl " + c.cmd
	if len(opts) > 3 {
		line += " [options]"
	} else if len(opts) > 0 {
		line += " " + strings.Join(opts, " ")
	}
	if c.args != "" {
		line += " " + c.args
	}
	return line
}

// help prints the usage line, what the command does and its options.
func (c *cmdline) help(w io.Writer) {
	fmt.Fprintln(w, c.usageLine())
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", wrap(c.about, "", 78))
	}
	fmt.Fprintln(w, "\nOptions:")
	c.visit(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && f.DefValue != "false" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %s\n%s\n", optionName(c, f, true), wrap(usage, "      ", 78))
	})
	fmt.Fprintln(w, "  -h, --help\n      show this help")
}

// optionName is how the help shows an option: "--json", "--limit SIZE",
// "--env NAME VALUE", and with withLong "-o, --output FILE".
func optionName(c *cmdline, f *flag.Flag, withLong bool) string {
	dashes := "--"
	if len(f.Name) == 1 {
		dashes = "-"
	}
	shown := dashes + f.Name
	if long, ok := c.longer[f.Name]; ok && withLong {
		shown += ", --" + long
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "string", "value":
		name = "VALUE"
	case "duration":
		name = "DURATION"
	}
	switch {
	case c.isPair(f.Name):
		return shown + " NAME VALUE"
	case name == "":
		return shown
	}
	return shown + " " + name
}

// wrap breaks text into lines of at most width runes, each after indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}
