package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/jupyterconfig"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// jupyter-guard's kernel provisioner (jupyter_guard/provisioner.py) guards
// every kernel Jupyter starts, under the kernel's own name: install --all
// makes it Jupyter's default, and kernel-argv gives it the command that
// starts a kernel under the guard, the same one a wrapped spec runs.
func init() {
	register(command{name: "kernel-argv", hidden: true, run: runKernelArgv})
}

// launchRequest is what the provisioner knows of the kernel it is about
// to start, as jupyter_client gives it.
type launchRequest struct {
	KernelName  string          `json:"kernel_name"`
	Kernelspec  json.RawMessage `json:"kernelspec"`   // kernel.json's fields, as jupyter_client read them
	ResourceDir string          `json:"resource_dir"` // the spec's directory
	// ConnectionFile is the file jupyter_client wrote, and Argv the spec's
	// argv as jupyter_client formatted it ({connection_file} filled in).
	ConnectionFile string   `json:"connection_file"`
	Argv           []string `json:"argv"`
	// Headless: no Jupyter server or console around the kernel (nbclient,
	// nbconvert, papermill, a script), so nobody to answer a pause.
	Headless bool `json:"headless"`
}

type launchReply struct {
	Argv []string `json:"argv"`
	Note string   `json:"note,omitempty"` // why argv is not wrapped, for Jupyter's log
}

// maxLaunchRequest bounds what kernel-argv reads: a kernelspec is a few KiB.
const maxLaunchRequest = 1 << 20

// runKernelArgv reads a launchRequest on stdin and prints the launchReply:
// the argv that runs the kernel under the guard. It runs in the kernel's
// environment, so that a bad JUPYTER_GUARD_* setting there stops the
// launch with its reason rather than leaving a kernel that dies at start.
func runKernelArgv(args []string) error {
	if len(args) > 0 {
		return errors.New("usage: guardctl kernel-argv < request.json (run by jupyter-guard's kernel provisioner)")
	}
	var req launchRequest
	dec := json.NewDecoder(io.LimitReader(os.Stdin, maxLaunchRequest))
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("reading the launch request: %w", err)
	}
	reply, err := guardedLaunch(req, os.Getenv)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(reply)
}

func guardedLaunch(req launchRequest, getenv func(string) string) (launchReply, error) {
	spec := &kernelspec.KernelSpec{Name: req.KernelName, Dir: req.ResourceDir}
	if err := json.Unmarshal(req.Kernelspec, spec); err != nil {
		return launchReply{}, fmt.Errorf("kernelspec %s: %w", req.KernelName, err)
	}
	switch mode := spec.Interrupt(); {
	case len(req.Argv) == 0:
		return launchReply{}, fmt.Errorf("kernelspec %s: no argv to launch", req.KernelName)
	case req.ConnectionFile == "":
		return launchReply{}, errors.New("no connection file in the launch request")
	case mode != "signal" && mode != "message":
		return launchReply{}, fmt.Errorf("kernelspec %s: interrupt_mode %q is neither signal nor message", req.KernelName, spec.InterruptMode)
	}
	if w := spec.Wraps(); w != "" {
		return launchReply{Argv: req.Argv, Note: fmt.Sprintf("kernelspec %s is the guarded form of %s: it starts the guard itself", spec.Name, w)}, nil
	}
	options, err := spec.GuardOptions()
	if err != nil {
		return launchReply{}, err
	}
	// The provisioner knows what the guard would have to guess: whether
	// anyone is there to answer a pause (jupyter console sets nothing that
	// tells it from nbclient).
	if optionValue(options, "headless") == "" && getenv("JUPYTER_GUARD_HEADLESS") == "" {
		options = append(options, "--headless="+map[bool]string{true: "on", false: "off"}[req.Headless])
	}
	// The kernel's environment, under the options, as guardctl kernel will
	// load it.
	fs := flag.NewFlagSet("guardctl kernel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config.RegisterFlags(fs)
	if err := fs.Parse(options); err != nil {
		return launchReply{}, err
	}
	if _, err := config.Load(getenv, fs); err != nil {
		return launchReply{}, fmt.Errorf("not starting kernel %s: %w", spec.Name, err)
	}
	guardctl, err := selfPath()
	if err != nil {
		return launchReply{}, err
	}
	return launchReply{Argv: kernelspec.Shelled(kernelspec.LaunchArgv(guardctl, req.ConnectionFile, spec.Interrupt(), req.ResourceDir, options, req.Argv))}, nil
}

// optionValue is the value of --name=value among options.
func optionValue(options []string, name string) string {
	for _, o := range options {
		if v, ok := strings.CutPrefix(o, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// allConfigFile is the Jupyter config file install --all and uninstall
// --all edit: the environment's own (py's, unless --prefix names one),
// where the provisioner is installed. The user's (~/.jupyter) would reach
// every Jupyter of the user, and those without jupyter-guard would then
// fail to start any kernel.
func allConfigFile(f *specFlags, py kernelspec.Python) (string, error) {
	switch {
	case f.user:
		return "", fmt.Errorf("--all --user: the default provisioner is set for the environment jupyter-guard is installed in (--sys-prefix, the default, or --prefix DIR); "+
			"a user-wide one would stop the kernels of every environment without it; set %s=%s where you want it instead", kernelspec.DefaultProvisionerVar, kernelspec.ProvisionerName)
	case len(f.kernels) > 0:
		return "", errors.New("--all is every kernel: give no --kernel with it")
	case f.prefix != "":
		return kernelspec.ConfigFile(f.prefix), nil
	case py.Prefix == "":
		return "", errors.New("--all: no Python environment found; name its interpreter with --python, or give --prefix")
	}
	return kernelspec.ConfigFile(py.Prefix), nil
}

// installAll makes jupyter-guard's provisioner Jupyter's default in the
// environment's config, then asks that Jupyter whether it now is.
func installAll(f *specFlags) error {
	py, err := f.jupyterPython()
	if err != nil {
		return err
	}
	file, err := allConfigFile(f, py)
	if err != nil {
		return err
	}
	facts, err := kernelspec.ProbeProvisioner(py)
	if err != nil {
		return err
	}
	if !facts.Registered {
		return fmt.Errorf("jupyter-guard's kernel provisioner is not installed where %s runs Jupyter: pip install jupyter-guard there "+
			"(made the default without it, every kernel would fail to start)", py.Executable)
	}
	changed, err := jupyterconfig.Set(file, kernelspec.ProvisionerSection, kernelspec.ProvisionerKey, kernelspec.ProvisionerName)
	if err != nil {
		return err
	}
	if facts, err = kernelspec.ProbeProvisioner(py); err == nil && facts.Default != kernelspec.ProvisionerName {
		err = fmt.Errorf("Jupyter on %s would still take %q as its default provisioner: a config file it reads after %s sets it (it reads %s)",
			py.Executable, facts.Default, file, strings.Join(facts.ConfigFiles, ", "))
	}
	if err != nil {
		if changed { // leave the file as it was
			if _, undo := jupyterconfig.Unset(file, kernelspec.ProvisionerSection, kernelspec.ProvisionerKey, kernelspec.ProvisionerName); undo != nil {
				fmt.Fprintln(os.Stderr, undo)
			}
		}
		return err
	}
	if changed {
		fmt.Printf("set %s.%s = %q in %s\n", kernelspec.ProvisionerSection, kernelspec.ProvisionerKey, kernelspec.ProvisionerName, file)
	} else {
		fmt.Printf("%s already makes %s the default kernel provisioner\n", file, kernelspec.ProvisionerName)
	}
	fmt.Printf("A Jupyter server on %s now guards every kernel under its own name, except kernelspecs that name a provisioner of their own; "+
		"restart the running ones.\njupyter console, nbclient, nbconvert and papermill do not read this file: set %s=%s where they run.\n",
		py.Executable, kernelspec.DefaultProvisionerVar, kernelspec.ProvisionerName)
	if search, err := findSpecs(py); err == nil {
		printOwnProvisioners(os.Stdout, search)
	}
	return nil
}

// uninstallAll takes back what installAll wrote, and only that.
func uninstallAll(f *specFlags) error {
	var py kernelspec.Python
	if f.prefix == "" {
		var err error
		if py, err = f.jupyterPython(); err != nil {
			return err
		}
	}
	file, err := allConfigFile(f, py)
	if err != nil {
		return err
	}
	removed, err := jupyterconfig.Unset(file, kernelspec.ProvisionerSection, kernelspec.ProvisionerKey, kernelspec.ProvisionerName)
	if err != nil {
		return err
	}
	if removed {
		fmt.Printf("removed %s.%s = %q from %s\n", kernelspec.ProvisionerSection, kernelspec.ProvisionerKey, kernelspec.ProvisionerName, file)
	} else {
		fmt.Printf("%s does not make %s the default kernel provisioner: nothing to remove\n", file, kernelspec.ProvisionerName)
	}
	return nil
}

// printOwnProvisioners names the kernelspecs the guard leaves alone
// because they name a provisioner of their own.
func printOwnProvisioners(w io.Writer, search kernelspec.Search) {
	for _, spec := range search.Specs {
		if own := spec.OwnProvisioner(); own != "" {
			fmt.Fprintf(w, "Not guarded: kernelspec %s starts its kernels through its own provisioner %q.\n", spec.Name, own)
		}
	}
}

// defaultLine says what Jupyter's default provisioner is, for the
// kernelspecs listing, and whether it guards the specs that name none.
func defaultLine(facts kernelspec.ProvisionerFacts) (string, bool) {
	byDefault, source := kernelspec.GuardedByDefault(facts)
	name := facts.Default
	if source == kernelspec.DefaultProvisionerVar {
		name = os.Getenv(kernelspec.DefaultProvisionerVar)
	}
	switch {
	case byDefault && !facts.Registered:
		return fmt.Sprintf("Jupyter's default kernel provisioner is %s (%s), but it is not installed there: every kernel will fail to start "+
			"(pip install jupyter-guard there, or guardctl uninstall --all).", name, source), false
	case byDefault && source == kernelspec.DefaultProvisionerVar:
		return fmt.Sprintf("Jupyter's default kernel provisioner is %s, from %s in this environment.", name, source), true
	case byDefault:
		return fmt.Sprintf("Jupyter's default kernel provisioner is %s, from its config (guardctl install --all); "+
			"jupyter console, nbclient, nbconvert and papermill follow only %s.", name, kernelspec.DefaultProvisionerVar), true
	case source != "":
		return fmt.Sprintf("Jupyter's default kernel provisioner is %s (%s).", name, source), false
	}
	return "", false
}
