package kernelspec

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Python is what guardctl needs to know about the interpreter that runs
// Jupyter: Go has no sys.prefix, yet the kernelspec search path, the
// built-in python3 kernel and the meaning of a bare "python" in argv all
// depend on it.
type Python struct {
	Executable string // sys.executable; "" when no interpreter was run
	Prefix     string // sys.prefix; its share/jupyter is searched
	BasePrefix string // sys.base_prefix; differs from Prefix in a venv
	Version    string // major.minor, e.g. "3.11"
	UserBase   string // site.getuserbase() when the user site is enabled, else ""
	HasIPython bool   // IPython importable, which adds ~/.ipython/kernels
	// Native is ipykernel's built-in "python3" spec, which jupyter_client
	// offers when no python3 spec is installed; nil without ipykernel.
	Native *KernelSpec
}

// probeScript prints the facts Python holds, as JSON. The native spec comes
// from ipykernel itself because its shape changes between ipykernel versions.
const probeScript = `
import importlib.util, json, site, sys
native = None
try:
    from ipykernel.kernelspec import RESOURCES, get_kernel_dict
    native = {"spec": get_kernel_dict(), "resource_dir": RESOURCES}
except ImportError:
    pass
print(json.dumps({
    "executable": sys.executable,
    "prefix": sys.prefix,
    "base_prefix": sys.base_prefix,
    "version": "%d.%d" % sys.version_info[:2],
    "user_base": site.getuserbase() if site.ENABLE_USER_SITE else "",
    "ipython": importlib.util.find_spec("IPython") is not None,
    "native": native,
}))
`

// runScript runs the Python script with the interpreter exe and returns
// what it printed; its error has what the script said on stderr.
func runScript(exe, script string) ([]byte, error) {
	out, err := exec.Command(exe, "-c", script).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Errorf("python %s: %w", exe, err)
	}
	return out, nil
}

// ProbePython runs the interpreter exe once to learn its environment.
func ProbePython(exe string) (Python, error) {
	out, err := runScript(exe, probeScript)
	if err != nil {
		return Python{}, err
	}
	var facts struct {
		Executable string `json:"executable"`
		Prefix     string `json:"prefix"`
		BasePrefix string `json:"base_prefix"`
		Version    string `json:"version"`
		UserBase   string `json:"user_base"`
		IPython    bool   `json:"ipython"`
		Native     *struct {
			Spec        *KernelSpec `json:"spec"`
			ResourceDir string      `json:"resource_dir"`
		} `json:"native"`
	}
	if err := json.Unmarshal(out, &facts); err != nil {
		return Python{}, fmt.Errorf("python %s: unexpected answer %q: %w", exe, out, err)
	}
	py := Python{
		Executable: facts.Executable,
		Prefix:     facts.Prefix,
		BasePrefix: facts.BasePrefix,
		Version:    facts.Version,
		UserBase:   facts.UserBase,
		HasIPython: facts.IPython,
	}
	if n := facts.Native; n != nil && n.Spec != nil {
		py.Native = n.Spec
		py.Native.Name = nativeKernelName
		py.Native.Dir = n.ResourceDir
	}
	return py, nil
}

// FindPython picks the environment whose Jupyter guardctl mirrors when the
// user names none: the python next to guardctl's own binary (pip installs
// guardctl into the bin of the environment it is meant to guard), else the
// interpreter of the `jupyter` command on PATH (the one that will start
// kernels), else python3 on PATH. When neither runs, an
// active $VIRTUAL_ENV or $CONDA_PREFIX still gives the prefix; failing all
// that, the zero Python leaves only the user and system directories.
func FindPython() Python {
	var candidates []string
	if self, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(self), "python"))
	}
	if jupyter, err := exec.LookPath("jupyter"); err == nil {
		if exe := shebangPython(jupyter); exe != "" {
			candidates = append(candidates, exe)
		}
	}
	if exe, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, exe)
	}
	for _, exe := range candidates {
		if py, err := ProbePython(exe); err == nil {
			return py
		}
	}
	if venv := os.Getenv("VIRTUAL_ENV"); venv != "" {
		return Python{Prefix: venv} // a venv: its base prefix differs, whatever it is
	}
	if conda := os.Getenv("CONDA_PREFIX"); conda != "" {
		return Python{Prefix: conda, BasePrefix: conda} // conda envs are not venvs
	}
	return Python{}
}

// shebangPython is the Python interpreter a script's #! line names, either
// directly or through env; "" when it names something else.
func shebangPython(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return ""
	}
	exe := fields[0]
	if filepath.Base(exe) == "env" {
		exe = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				exe, _ = exec.LookPath(f)
				break
			}
		}
	}
	if !strings.HasPrefix(filepath.Base(exe), "python") {
		return ""
	}
	return exe
}

// pinInterpreter returns argv with a bare python, python3 or python3.X
// (this interpreter's version) replaced by the interpreter's path. Jupyter
// does that to argv[0] at launch; once guardctl is argv[0], Jupyter no
// longer would, and PATH might find another Python without ipykernel.
func (py Python) pinInterpreter(argv []string) []string {
	if py.Executable == "" || len(argv) == 0 {
		return argv
	}
	major, _, _ := strings.Cut(py.Version, ".")
	switch argv[0] {
	case "python", "python" + major, "python" + py.Version:
		return append([]string{py.Executable}, argv[1:]...)
	}
	return argv
}

// IPykernelSpec is the spec `python -m ipykernel install` writes for this
// interpreter with the same --name, --display-name and --env, made by
// ipykernel itself (its defaults, such as -Xfrozen_modules=off, change
// between versions), in a directory under tmp.
func (py Python) IPykernelSpec(tmp string, n Naming) (*KernelSpec, error) {
	if py.Executable == "" || py.Native == nil {
		return nil, errors.New("no ipykernel in the Python that runs Jupyter (see --python)")
	}
	name := cmp.Or(n.Name, nativeKernelName)
	args := []string{"-m", "ipykernel", "install", "--prefix", tmp, "--name", name}
	if n.DisplayName != "" {
		args = append(args, "--display-name", n.DisplayName)
	}
	for _, k := range slices.Sorted(maps.Keys(n.Env)) {
		args = append(args, "--env", k, n.Env[k])
	}
	if out, err := exec.Command(py.Executable, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s -m ipykernel install: %w: %s", py.Executable, err, strings.TrimSpace(string(out)))
	}
	spec, err := ReadSpec(PrefixKernelsDir(tmp) + "/" + strings.ToLower(name))
	if err != nil {
		return nil, err
	}
	spec.Name = nativeKernelName // what it wraps: this Python's own kernel
	return spec, nil
}
