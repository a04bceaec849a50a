package kernelspec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// jupyterVars are the variables that move Jupyter's directories.
var jupyterVars = []string{
	"JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_PLATFORM_DIRS",
	"JUPYTER_PREFER_ENV_PATH", "XDG_DATA_HOME", "XDG_DATA_DIRS", "IPYTHONDIR",
	"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONUSERBASE",
}

// cleanEnv gives the test a fresh HOME and unsets jupyterVars (an empty
// JUPYTER_PLATFORM_DIRS would count as set), restoring them afterwards.
// The system directories stay the machine's: see ownSystemDirs.
func cleanEnv(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range jupyterVars {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	return home
}

// ownSystemDirs points SystemDirs at an empty directory of the test's, so
// that kernelspecs the machine has installed system-wide are not found.
func ownSystemDirs(t *testing.T) (system string) {
	t.Helper()
	system = t.TempDir()
	saved := SystemDirs
	SystemDirs = []string{system}
	t.Cleanup(func() { SystemDirs = saved })
	return system
}

// placeSpec copies the fixture testdata/kernelspecs/<fixture> to dir.
func placeSpec(t *testing.T, fixture, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "kernelspecs", fixture))); err != nil {
		t.Fatal(err)
	}
}

// readFixture reads a fixture spec in place.
func readFixture(t *testing.T, fixture string) *KernelSpec {
	t.Helper()
	spec, err := ReadSpec(filepath.Join("..", "testdata", "kernelspecs", fixture))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// testPython is the interpreter of the test venv; the test is skipped without it.
func testPython(t *testing.T) string { return testenv.Python(t, "jupyter_client and ipykernel") }

// runPython runs a script on the test interpreter in the current
// environment and returns its standard output.
func runPython(t *testing.T, py string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%s %v: %v\n%s", py, args, err, exit.Stderr)
		}
		t.Fatalf("%s %v: %v", py, args, err)
	}
	return out
}
