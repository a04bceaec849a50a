package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

func init() {
	register(command{name: "install", summary: "wrap installed kernelspecs so Jupyter starts them through guardctl", run: runInstall})
	register(command{name: "uninstall", summary: "remove the guarded kernelspecs guardctl installed", run: runUninstall})
	register(command{name: "kernelspecs", summary: "list the kernelspecs Jupyter sees and which are guarded", run: runKernelspecs})
}

// specFlags are the options of the kernelspec subcommands: ipykernel's
// install options where they mean the same.
type specFlags struct {
	cl        *cmdline
	kernels   []string
	user      bool
	sysPrefix bool
	prefix    string
	python    string
	naming    kernelspec.Naming // install only
	all       bool              // install --all, uninstall --all: the default provisioner (provisioner.go)
}

// newSpecFlags declares --python on every subcommand; withTarget adds
// --kernel and the location options.
func newSpecFlags(cmd, args, about string, maxArgs int, withTarget bool) *specFlags {
	f := &specFlags{cl: newCmdline(cmd, args, about, 0, maxArgs)}
	f.cl.StringVar(&f.python, "python", "", "the Python `INTERPRETER` that runs Jupyter (default: the one beside guardctl, else behind `jupyter` on PATH, else python3)")
	if withTarget {
		f.cl.Func("kernel", "the kernelspec `NAME` to act on; repeatable", func(v string) error {
			f.kernels = append(f.kernels, v)
			return nil
		})
		f.cl.BoolVar(&f.user, "user", false, "the per-user kernels directory, seen by every environment's Jupyter (the default)")
		f.cl.BoolVar(&f.sysPrefix, "sys-prefix", false, "the kernels directory of the Python environment (venv or conda env) that runs Jupyter")
		f.cl.StringVar(&f.prefix, "prefix", "", "`DIR`/share/jupyter/kernels")
		f.cl.BoolVar(&f.all, "all", false, "every kernel, under its own name: jupyter-guard's kernel provisioner as Jupyter's default, "+
			"set (install) or taken out (uninstall) in the environment's DIR/etc/jupyter/jupyter_config.json (--prefix DIR for another)")
	}
	return f
}

// parse reads args, returns the arguments and checks that at most one
// location was chosen.
func (f *specFlags) parse(args []string) ([]string, error) {
	pos, err := f.cl.parse(args)
	if err != nil {
		return nil, err
	}
	chosen := 0
	for _, on := range []bool{f.user, f.sysPrefix, f.prefix != ""} {
		if on {
			chosen++
		}
	}
	if chosen > 1 {
		return nil, f.cl.fail("choose one of --user, --sys-prefix and --prefix")
	}
	return pos, nil
}

// location is the option that names the chosen kernels directory, for
// the hint that says how to remove what was installed there.
func (f *specFlags) location() string {
	switch {
	case f.prefix != "":
		return " --prefix " + f.prefix
	case f.sysPrefix:
		return " --sys-prefix"
	}
	return ""
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

// setUp finds the Jupyter environment the options name and the
// kernelspecs it sees.
func (f *specFlags) setUp() (kernelspec.Python, kernelspec.Search, error) {
	py, err := f.jupyterPython()
	if err != nil {
		return py, kernelspec.Search{}, err
	}
	search, err := findSpecs(py)
	return py, search, err
}

func runInstall(args []string) error {
	f := newSpecFlags("install", "", "Wraps installed kernelspecs so that Jupyter starts them through guardctl, each as NAME-guarded (\"... (guarded)\"); with no --kernel, every one not yet guarded. With --name or --display-name it installs one guarded kernel (--kernel, default python3) as python -m ipykernel install would with the same options. The kernels are those of the Jupyter beside guardctl (see --python). Running it again replaces what it wrote; it never touches a spec it did not write.", 0, true)
	f.cl.StringVar(&f.naming.Name, "name", "", "install one kernel under this `NAME` (default: NAME-guarded)")
	f.cl.StringVar(&f.naming.DisplayName, "display-name", "", "install one kernel with this `TEXT` in Jupyter's launcher (default: \"<its display name> (guarded)\")")
	f.cl.Func("env", "set `NAME VALUE` in the kernel's environment; repeatable", func(v string) error {
		name, value, _ := strings.Cut(v, "=")
		if name == "" {
			return fmt.Errorf("--env needs a variable name")
		}
		if f.naming.Env == nil {
			f.naming.Env = map[string]string{}
		}
		f.naming.Env[name] = value
		return nil
	})
	f.cl.pairs = []string{"env"}
	limit := f.cl.String("limit", "", "the kernel's memory budget: a `SIZE` (8GiB) or a share of the limit the guard finds (80%); sets JUPYTER_GUARD_LIMIT in its environment")
	if _, err := f.parse(args); err != nil {
		return err
	}
	if f.all {
		if *limit != "" || f.naming.Name != "" || f.naming.DisplayName != "" || len(f.naming.Env) > 0 {
			return f.cl.fail("--all guards each kernel under its own name and settings: give no --name, --display-name, --env or --limit with it " +
				"(set a kernel's in its kernelspec, metadata.kernel_provisioner.config, or JUPYTER_GUARD_* in the environment)")
		}
		return installAll(f)
	}
	if *limit != "" {
		if _, err := config.ParseSpec(*limit); err != nil {
			return f.cl.fail("--limit %s: %v", *limit, err)
		}
		if f.naming.Env == nil {
			f.naming.Env = map[string]string{}
		}
		f.naming.Env["JUPYTER_GUARD_LIMIT"] = *limit
	}
	one := f.naming.Name != "" || f.naming.DisplayName != ""
	if one && len(f.kernels) > 1 {
		return f.cl.fail("--name and --display-name name one kernel: give at most one --kernel")
	}
	if one && len(f.kernels) == 0 {
		f.kernels = []string{"python3"} // as ipykernel's installer
	}
	py, search, err := f.setUp()
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
			if one && name == "python3" && py.Native != nil {
				// As `python -m ipykernel install` with the same options
				// would write it for this Python, whatever python3 spec is
				// installed.
				tmp, terr := os.MkdirTemp("", "guardctl-ipykernel-")
				if terr != nil {
					return terr
				}
				defer os.RemoveAll(tmp)
				spec, err = py.IPykernelSpec(tmp, f.naming)
			}
			if err != nil {
				return err
			}
			specs = append(specs, spec)
		}
		for _, spec := range specs {
			if err := f.install(spec, guardctl, dir, py); err != nil {
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
		if err := f.install(spec, guardctl, dir, py); err != nil {
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

// install installs spec's guarded form and says where it went and how it
// is removed.
func (f *specFlags) install(spec *kernelspec.KernelSpec, guardctl, dir string, py kernelspec.Python) error {
	guarded, err := kernelspec.Install(spec, guardctl, dir, py, f.naming)
	if err != nil {
		return err
	}
	fmt.Printf("installed %s (guards %s) in %s\n", guarded.Name, spec.Name, guarded.Dir)
	fmt.Printf("  remove it with: guardctl uninstall%s %s\n", f.location(), guarded.Name)
	if f.location() == "" && py.Prefix != "" && py.Prefix != py.BasePrefix {
		fmt.Printf("  (the per-user directory: every environment's Jupyter sees it; --sys-prefix keeps it to %s)\n", py.Prefix)
	}
	return nil
}

func runUninstall(args []string) error {
	f := newSpecFlags("uninstall", "[NAME...]", "Removes the guarded kernelspecs guardctl installed in one kernels directory (the per-user one unless --sys-prefix or --prefix says otherwise): those named, by their own name or the name of the kernel they guard, else all. It never touches a spec it did not write.", -1, true)
	f.cl.Func("name", "the guarded kernelspec `NAME` to remove; repeatable", func(v string) error {
		f.kernels = append(f.kernels, v)
		return nil
	})
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if f.all {
		if len(pos) > 0 {
			return f.cl.fail("--all takes out the default provisioner: name no kernelspec with it")
		}
		return uninstallAll(f)
	}
	var py kernelspec.Python
	if f.sysPrefix {
		if py, err = f.jupyterPython(); err != nil {
			return err
		}
	}
	dir, err := f.kernelsDir(py)
	if err != nil {
		return err
	}

	names := append(f.kernels, pos...)
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
	f := newSpecFlags("kernelspecs", "", "Lists the kernelspecs Jupyter sees, and which are guarded.", 0, false)
	if _, err := f.parse(args); err != nil {
		return err
	}
	py, search, err := f.setUp()
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
