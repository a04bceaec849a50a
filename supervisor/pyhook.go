package supervisor

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed pyhook/sitecustomize.py
var siteCustomize []byte

// faultFD is the fd on which a Python kernel gets the pipe for
// faulthandler's crash report (child.Spec.Extra's first entry).
const faultFD = 3

// installPyHook writes the sitecustomize that points a Python kernel's
// faulthandler at the proxy into a private dir, and returns the environment
// that makes the kernel load it. Other kernels ignore both.
func installPyHook(runtimeDir, kernelID string) (dir string, env []string, err error) {
	dir = filepath.Join(runtimeDir, "guard-py-"+kernelID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("python crash hook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sitecustomize.py"), siteCustomize, 0o600); err != nil {
		return "", nil, fmt.Errorf("python crash hook: %w", err)
	}
	path := dir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		path = strings.Join([]string{dir, old}, string(os.PathListSeparator))
	}
	return dir, []string{"PYTHONPATH=" + path, fmt.Sprintf("JUPYTER_GUARD_FAULT_FD=%d", faultFD)}, nil
}
