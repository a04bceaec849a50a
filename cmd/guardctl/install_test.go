package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// kernelspecEnv gives the subcommands a Jupyter of their own: a data dir
// holding the ir and python3 fixtures, no system-wide kernelspecs of the
// machine's, and no Python on PATH to consult.
func kernelspecEnv(t *testing.T) (kernels string) {
	t.Helper()
	saved := kernelspec.SystemDirs
	kernelspec.SystemDirs = []string{t.TempDir()}
	t.Cleanup(func() { kernelspec.SystemDirs = saved })
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	for _, v := range []string{"JUPYTER_PATH", "VIRTUAL_ENV", "CONDA_PREFIX"} {
		t.Setenv(v, "")
	}
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	kernels = filepath.Join(data, "kernels")
	for _, name := range []string{"ir", "python3"} {
		if err := os.CopyFS(filepath.Join(kernels, name), os.DirFS(filepath.Join("..", "..", "testdata", "kernelspecs", name))); err != nil {
			t.Fatal(err)
		}
	}
	return kernels
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestInstallCommandWrapsEverySpecOnce(t *testing.T) {
	kernels := kernelspecEnv(t)
	for range 2 {
		if err := runInstall(nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"ir", "ir-guarded", "python3", "python3-guarded"}
	if got := dirNames(t, kernels); !slices.Equal(got, want) {
		t.Fatalf("kernels dir holds %q, want %q", got, want)
	}
	guarded, err := kernelspec.ReadSpec(filepath.Join(kernels, "ir-guarded"))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := selfPath()
	if guarded.Argv[3] != self || !filepath.IsAbs(self) {
		t.Errorf("argv %q, want this binary's absolute path %q to run", guarded.Argv, self)
	}

	if err := runUninstall([]string{"--kernel", "ir"}); err != nil {
		t.Fatal(err)
	}
	if err := runUninstall(nil); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, kernels); !slices.Equal(got, []string{"ir", "python3"}) {
		t.Errorf("after uninstall the kernels dir holds %q, want the originals only", got)
	}
}

func TestInstallCommandErrors(t *testing.T) {
	kernelspecEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", "julia"}, "no kernelspec named julia; installed: ir, python3"},
		{[]string{"--sys-prefix"}, "--sys-prefix: no Python environment found"},
		{[]string{"--name", "Bad Name!", "--kernel", "ir"}, `kernelspec name "Bad Name!"`},
	} {
		if err := runInstall(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("install %q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	// Mistakes on the command line: told on stderr with the usage, exit 2.
	for _, args := range [][]string{{"--user", "--prefix", "/opt/x"}, {"stray"}, {"--name", "a", "--kernel", "ir", "--kernel", "python3"},
		{"--env", "ONLY_A_NAME"}, {"--limit", "lots"}} {
		if err := runInstall(args); err != exitCode(2) {
			t.Errorf("install %q: error %v, want a usage error", args, err)
		}
	}
}

func TestInstallCommandPrefix(t *testing.T) {
	kernelspecEnv(t)
	prefix := t.TempDir()
	if err := runInstall([]string{"--kernel", "IR", "--prefix", prefix}); err != nil {
		t.Fatal(err)
	}
	kernels := kernelspec.PrefixKernelsDir(prefix)
	if got := dirNames(t, kernels); !slices.Equal(got, []string{"ir-guarded"}) {
		t.Errorf("%s holds %q, want ir-guarded", kernels, got)
	}
}
