package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

func init() {
	register(command{name: "install", summary: "wrap installed kernelspecs so Jupyter starts them through guardctl", run: runInstall})
	register(command{name: "uninstall", summary: "remove the guarded kernelspecs guardctl installed", run: runUninstall})
	register(command{name: "kernelspecs", summary: "list the kernelspecs Jupyter sees and which are guarded", run: runKernelspecs})
}

// specFlags are the options of the kernelspec subcommands.
type specFlags struct {
	set       *flag.FlagSet
	kernels   []string
	user      bool
	sysPrefix bool
	prefix    string
	python    string
	all       bool // install --all, uninstall --all: the default provisioner (provisioner.go)
}

// newSpecFlags declares --python on every subcommand; withTarget adds
// --kernel and the install location flags.
func newSpecFlags(name string, withTarget bool) *specFlags {
	f := &specFlags{set: flag.NewFlagSet("guardctl "+name, flag.ContinueOnError)}
	f.set.StringVar(&f.python, "python", "", "the Python `interpreter` that runs Jupyter (default: the one behind `jupyter` on PATH, else python3)")
	if withTarget {
		f.set.Func("kernel", "kernelspec `NAME` to act on; repeatable (default: all)", func(v string) error {
			f.kernels = append(f.kernels, v)
			return nil
		})
		f.set.BoolVar(&f.user, "user", false, "use the per-user kernels directory (the default)")
		f.set.BoolVar(&f.sysPrefix, "sys-prefix", false, "use the Python environment's kernels directory")
		f.set.StringVar(&f.prefix, "prefix", "", "use `DIR`/share/jupyter/kernels")
		f.set.BoolVar(&f.all, "all", false, "every kernel, under its own name: make jupyter-guard Jupyter's default kernel provisioner "+
			"in the environment's config (DIR/etc/jupyter/jupyter_config.json; uninstall --all takes it out)")
	}
	return f
}

// parse reads args and checks that at most one location was chosen.
func (f *specFlags) parse(args []string) error {
	if err := f.set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitCode(0)
		}
		return exitCode(2) // the flag package has already said what was wrong
	}
	if f.set.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.set.Arg(0))
	}
	chosen := 0
	for _, on := range []bool{f.user, f.sysPrefix, f.prefix != ""} {
		if on {
			chosen++
		}
	}
	if chosen > 1 {
		return errors.New("choose one of --user, --sys-prefix and --prefix")
	}
	return nil
}

// jupyterPython is the environment whose Jupyter we mirror.
func (f *specFlags) jupyterPython() (kernelspec.Python, error) {
	if f.python != "" {
		return kernelspec.ProbePython(f.python)
	}
	return kernelspec.FindPython(), nil
}

// kernelsDir is the directory the location flags name.
func (f *specFlags) kernelsDir(py kernelspec.Python) (string, error) {
	switch {
	case f.prefix != "":
		abs, err := filepath.Abs(f.prefix)
		if err != nil {
			return "", fmt.Errorf("--prefix %s: %w", f.prefix, err)
		}
		return kernelspec.PrefixKernelsDir(abs), nil
	case f.sysPrefix:
		if py.Prefix == "" {
			return "", errors.New("--sys-prefix: no Python environment found; name its interpreter with --python")
		}
		return kernelspec.PrefixKernelsDir(py.Prefix), nil
	default:
		return kernelspec.UserKernelsDir()
	}
}

// setUp parses args, then finds the Jupyter environment they name and the
// kernelspecs it sees.
func (f *specFlags) setUp(args []string) (kernelspec.Python, kernelspec.Search, error) {
	if err := f.parse(args); err != nil {
		return kernelspec.Python{}, kernelspec.Search{}, err
	}
	return f.find()
}

// find finds the Jupyter environment the parsed flags name and the
// kernelspecs it sees.
func (f *specFlags) find() (kernelspec.Python, kernelspec.Search, error) {
	py, err := f.jupyterPython()
	if err != nil {
		return py, kernelspec.Search{}, err
	}
	search, err := findSpecs(py)
	return py, search, err
}

func runInstall(args []string) error {
	f := newSpecFlags("install", true)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.all {
		return installAll(f)
	}
	py, search, err := f.find()
	if err != nil {
		return err
	}
	dir, err := f.kernelsDir(py)
	if err != nil {
		return err
	}
	guardctl, err := selfPath()
	if err != nil {
		return err
	}

	if len(f.kernels) > 0 {
		var specs []*kernelspec.KernelSpec
		for _, name := range f.kernels {
			spec, err := search.Get(name)
			if err != nil {
				return err
			}
			specs = append(specs, spec)
		}
		for _, spec := range specs {
			if err := install(spec, guardctl, dir, py); err != nil {
				return err
			}
		}
		return nil
	}

	wrapped := 0
	for _, spec := range search.Specs {
		if spec.Wraps() != "" {
			continue
		}
		if spec.GuardedByProvisioner() {
			fmt.Fprintf(os.Stderr, "skipped %s: its kernelspec asks for the %s provisioner: it is guarded already\n", spec.Name, kernelspec.ProvisionerName)
			continue
		}
		if err := install(spec, guardctl, dir, py); err != nil {
			fmt.Fprintf(os.Stderr, "skipped %s: %v\n", spec.Name, err)
			continue
		}
		wrapped++
	}
	if wrapped == 0 {
		return fmt.Errorf("no kernelspec to guard; searched %s", strings.Join(search.Dirs, ", "))
	}
	return nil
}

func install(spec *kernelspec.KernelSpec, guardctl, dir string, py kernelspec.Python) error {
	guarded, err := kernelspec.Install(spec, guardctl, dir, py)
	if err != nil {
		return err
	}
	fmt.Printf("installed %s (guards %s) in %s\n", guarded.Name, spec.Name, guarded.Dir)
	return nil
}

func runUninstall(args []string) error {
	f := newSpecFlags("uninstall", true)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.all {
		return uninstallAll(f)
	}
	var py kernelspec.Python
	if f.sysPrefix {
		var err error
		if py, err = f.jupyterPython(); err != nil {
			return err
		}
	}
	dir, err := f.kernelsDir(py)
	if err != nil {
		return err
	}

	names := f.kernels
	if len(names) == 0 {
		for _, g := range kernelspec.GuardedIn(dir) {
			names = append(names, g.Name)
		}
		if len(names) == 0 {
			fmt.Printf("no guarded kernelspecs in %s\n", dir)
			return nil
		}
	}
	for _, name := range names {
		removed, err := kernelspec.Uninstall(dir, name)
		if err != nil {
			return err
		}
		fmt.Printf("removed %s from %s\n", removed.Name, dir)
	}
	return nil
}

func runKernelspecs(args []string) error {
	f := newSpecFlags("kernelspecs", false)
	py, search, err := f.setUp(args)
	if err != nil {
		return err
	}
	if py.Executable != "" {
		fmt.Printf("as seen by Jupyter on %s\n", py.Executable)
	}
	byDefault := false
	if facts, err := kernelspec.ProbeProvisioner(py); err != nil {
		fmt.Fprintf(os.Stderr, "warning: %v\n", err)
	} else if line, on := defaultLine(facts); line != "" {
		fmt.Println(line)
		byDefault = on
	}
	fmt.Println()
	if len(search.Specs) == 0 {
		fmt.Printf("no kernelspecs; searched %s\n", strings.Join(search.Dirs, ", "))
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tDISPLAY NAME\tGUARDED\tWHERE")
	for _, spec := range search.Specs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", spec.Name, spec.DisplayName, guardState(search, spec, byDefault), spec.Dir)
	}
	return w.Flush()
}

// guardState says how spec relates to guarding, for the listing; byDefault:
// jupyter-guard is Jupyter's default provisioner.
func guardState(search kernelspec.Search, spec *kernelspec.KernelSpec, byDefault bool) string {
	if w := spec.Wraps(); w != "" {
		return "guards " + w
	}
	if own := spec.OwnProvisioner(); own != "" {
		return "no: provisioner " + own
	}
	var ways []string
	switch name, _, _ := spec.Provisioner(); {
	case name == kernelspec.ProvisionerName:
		ways = append(ways, "by its provisioner")
	case name == "" && byDefault:
		ways = append(ways, "by the default provisioner")
	}
	if g := search.GuardOf(spec.Name); g != nil {
		ways = append(ways, "as "+g.Name)
	}
	if len(ways) == 0 {
		return "no"
	}
	return "yes, " + strings.Join(ways, " and ")
}

// findSpecs searches and reports, without stopping, the specs Jupyter
// would skip too.
func findSpecs(py kernelspec.Python) (kernelspec.Search, error) {
	search, err := kernelspec.FindAll(py)
	for _, problem := range search.Broken {
		fmt.Fprintf(os.Stderr, "warning: Jupyter will skip a broken %v\n", problem)
	}
	return search, err
}

// selfPath is this binary's absolute path, symlinks resolved, so guarded
// specs keep working whatever PATH Jupyter has.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the guardctl binary: %w", err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("locating the guardctl binary: %w", err)
	}
	return real, nil
}
