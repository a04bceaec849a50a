package kernelspec

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The directories below follow jupyter_core 5.9's paths.py on Linux, so that
// guardctl reads and writes kernelspecs exactly where Jupyter looks for them.

// DataDir is Jupyter's per-user data directory: $JUPYTER_DATA_DIR, else
// $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter (home with symlinks
// resolved, as jupyter_core does). With JUPYTER_PLATFORM_DIRS set,
// platformdirs rules apply instead: XDG_DATA_HOME counts only when absolute
// and the home directory is not resolved.
func DataDir() (string, error) {
	if dir := os.Getenv("JUPYTER_DATA_DIR"); dir != "" {
		return dir, nil
	}
	xdg := os.Getenv("XDG_DATA_HOME")
	platform := usePlatformDirs()
	if (platform && filepath.IsAbs(xdg)) || (!platform && xdg != "") {
		return filepath.Join(xdg, "jupyter"), nil
	}
	home, err := homeDir(!platform)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// RuntimeDir is where Jupyter writes connection files: $JUPYTER_RUNTIME_DIR,
// else DataDir()/runtime.
func RuntimeDir() (string, error) {
	if dir := os.Getenv("JUPYTER_RUNTIME_DIR"); dir != "" {
		return dir, nil
	}
	data, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(data, "runtime"), nil
}

// MakeRuntimeDir makes dir, or RuntimeDir() when dir is "", if it is not
// there yet (a fresh machine has none), private as jupyter_client makes
// it, and returns it.
func MakeRuntimeDir(dir string) (string, error) {
	if dir == "" {
		d, err := RuntimeDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("jupyter runtime dir: %w", err)
	}
	return dir, nil
}

// UserKernelsDir is where `--user` installs kernelspecs.
func UserKernelsDir() (string, error) {
	data, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(data, "kernels"), nil
}

// PrefixKernelsDir is where `--prefix DIR` (and `--sys-prefix`, with the
// environment's prefix) installs kernelspecs.
func PrefixKernelsDir(prefix string) string {
	return filepath.Join(prefix, "share", "jupyter", "kernels")
}

// KernelDirs is the kernelspec search path of a Jupyter running on py, in
// priority order (an earlier directory's spec hides a later one of the same
// name): $JUPYTER_PATH entries; the user and environment directories, the
// environment first when py is an owned venv or conda env or
// JUPYTER_PREFER_ENV_PATH says so; the system directories; and
// ~/.ipython/kernels when py has IPython, as jupyter_client adds it.
//
// Differences from Jupyter, all deliberate: empty $JUPYTER_PATH entries are
// skipped (Jupyter would search ./kernels relative to its working
// directory), and the legacy ~/.config/ipython location and the
// unwritable-IPYTHONDIR fallback are not reproduced.
func KernelDirs(py Python) ([]string, error) {
	var dirs []string
	for _, p := range filepath.SplitList(os.Getenv("JUPYTER_PATH")) {
		if p = strings.TrimRight(p, string(filepath.Separator)); p != "" {
			dirs = append(dirs, p)
		}
	}

	data, err := DataDir()
	if err != nil {
		return nil, err
	}
	user := []string{data}
	if py.UserBase != "" {
		if userShare := filepath.Join(py.UserBase, "share", "jupyter"); userShare != data {
			user = append(user, userShare)
		}
	}

	system := systemDirs()
	var env []string
	if py.Prefix != "" {
		if envShare := filepath.Join(py.Prefix, "share", "jupyter"); !slices.Contains(system, envShare) {
			env = append(env, envShare)
		}
	}
	if preferEnv(py) {
		dirs = append(append(dirs, env...), user...)
	} else {
		dirs = append(append(dirs, user...), env...)
	}
	for _, s := range system {
		if !slices.Contains(dirs, s) {
			dirs = append(dirs, s)
		}
	}

	for i, d := range dirs {
		dirs[i] = filepath.Join(d, "kernels")
	}
	if py.HasIPython {
		ipython, err := ipythonDir()
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, filepath.Join(ipython, "kernels"))
	}
	return dirs, nil
}

// SystemDirs are jupyter_core's machine-wide directories on Linux. A
// variable so that tests can give discovery a tree of their own instead of
// whatever the machine has installed (Debian's r-cran-irkernel puts a spec
// in /usr/share/jupyter).
var SystemDirs = []string{"/usr/local/share/jupyter", "/usr/share/jupyter"}

// systemDirs are the machine-wide Jupyter directories: with
// JUPYTER_PLATFORM_DIRS, the absolute XDG_DATA_DIRS entries if any.
func systemDirs() []string {
	if usePlatformDirs() {
		var dirs []string
		for _, d := range filepath.SplitList(os.Getenv("XDG_DATA_DIRS")) {
			if filepath.IsAbs(d) {
				dirs = append(dirs, filepath.Join(d, "jupyter"))
			}
		}
		if len(dirs) > 0 {
			return dirs
		}
	}
	return SystemDirs
}

// preferEnv says whether the environment's directory outranks the user's,
// by jupyter_core's rules.
func preferEnv(py Python) bool {
	if _, set := os.LookupEnv("JUPYTER_PREFER_ENV_PATH"); set {
		return envSet("JUPYTER_PREFER_ENV_PATH")
	}
	if py.Prefix == "" {
		return false
	}
	if py.Prefix != py.BasePrefix && ownedByMe(py.Prefix) {
		return true
	}
	condaPrefix, inConda := os.LookupEnv("CONDA_PREFIX")
	condaEnv, named := os.LookupEnv("CONDA_DEFAULT_ENV")
	if !named {
		condaEnv = "base"
	}
	return inConda && strings.HasPrefix(py.Prefix, condaPrefix) && condaEnv != "base" && ownedByMe(py.Prefix)
}

// ownedByMe says whether the nearest existing ancestor of path belongs to
// the effective user. jupyter_core first compares owner and login names;
// the uid is what that comparison stands for.
func ownedByMe(path string) bool {
	for {
		info, err := os.Stat(path)
		if err == nil {
			st, ok := info.Sys().(*syscall.Stat_t)
			return ok && int(st.Uid) == os.Geteuid()
		}
		parent := filepath.Dir(path)
		if parent == path {
			return false
		}
		path = parent
	}
}

func usePlatformDirs() bool { return envSet("JUPYTER_PLATFORM_DIRS") }

// envSet reads a boolean variable as jupyter_core does: set to anything
// but no, n, false, off, 0 or 0.0 (any case) means true.
func envSet(name string) bool {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false
	}
	return !slices.Contains([]string{"no", "n", "false", "off", "0", "0.0"}, strings.ToLower(v))
}

// homeDir is $HOME, or the password database's entry when HOME is unset or
// not absolute; resolve follows symlinks as jupyter_core and IPython do.
func homeDir(resolve bool) (string, error) {
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("cannot find the home directory: HOME is %q and %w", home, err)
		}
		home = u.HomeDir
	}
	if resolve {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			return real, nil
		}
	}
	return home, nil
}

// ipythonDir is $IPYTHONDIR (with ~ expanded) or ~/.ipython.
func ipythonDir() (string, error) {
	dir, set := os.LookupEnv("IPYTHONDIR")
	if set && dir != "~" && !strings.HasPrefix(dir, "~/") {
		return filepath.Clean(dir), nil
	}
	home, err := homeDir(!set)
	if err != nil {
		return "", err
	}
	if set {
		return filepath.Join(home, strings.TrimPrefix(dir, "~")), nil
	}
	return filepath.Join(home, ".ipython"), nil
}
