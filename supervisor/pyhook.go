package supervisor

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/ceiling"
)

//go:embed pyhook/sitecustomize.py
var siteCustomize []byte

// faultFD is the fd on which a Python kernel gets the pipe for
// faulthandler's crash report (child.Spec.Extra's first entry).
const faultFD = 3

// installPyHook writes the sitecustomize that points a Python kernel's
// faulthandler at the proxy (and ends a cell heading for the memory
// ceiling) into a private dir, and returns the environment
// that makes the kernel load it (and tells it what to put back once
// loaded: PYTHONPATH, and the PYTHONFAULTHANDLER childEnv sets). Other
// kernels ignore it.
func installPyHook(privDir string) (env []string, err error) {
	dir := filepath.Join(privDir, "py")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("python crash hook: %w", err)
	}
	if err := writeIfChanged(filepath.Join(dir, "sitecustomize.py"), siteCustomize); err != nil {
		return nil, fmt.Errorf("python crash hook: %w", err)
	}
	path := dir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		path = strings.Join([]string{dir, old}, string(os.PathListSeparator))
	}
	restore, err := json.Marshal(map[string]*string{"PYTHONPATH": lookupEnv("PYTHONPATH"),
		"PYTHONFAULTHANDLER": lookupEnv("PYTHONFAULTHANDLER")})
	if err != nil {
		return nil, fmt.Errorf("python crash hook: %w", err)
	}
	return []string{"PYTHONPATH=" + path, fmt.Sprintf("JUPYTER_GUARD_FAULT_FD=%d", faultFD),
		fmt.Sprintf("JUPYTER_GUARD_NEAR_SIGNAL=%d", ceiling.NearSignal), "JUPYTER_GUARD_RESTORE_ENV=" + string(restore)}, nil
}

// lookupEnv is the proxy's own value of name, nil if it is not set: the
// hook puts back what the kernel's environment had before the proxy added
// to it, so the notebook's subprocesses inherit none of it.
func lookupEnv(name string) *string {
	if v, ok := os.LookupEnv(name); ok {
		return &v
	}
	return nil
}
