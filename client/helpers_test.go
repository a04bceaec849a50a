package client

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// testPython is the interpreter of the test venv; the test is skipped without it.
func testPython(t *testing.T) string { return testenv.Python(t, "ipykernel") }

// ipykernelSpec is a kernelspec for ipykernel on py.
func ipykernelSpec(t *testing.T, py string) *kernelspec.KernelSpec {
	return &kernelspec.KernelSpec{
		Name:     "test-python",
		Dir:      t.TempDir(),
		Argv:     []string{py, "-m", "ipykernel_launcher", "-f", "{connection_file}"},
		Language: "python",
	}
}

var (
	buildOnce   sync.Once
	guardctlBin string
	buildErr    error
	buildDir    string
)

// guardctl builds cmd/guardctl once for all the tests of this package.
func guardctl(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "client-test"); buildErr != nil {
			return
		}
		guardctlBin = filepath.Join(buildDir, "guardctl")
		out, err := exec.Command("go", "build", "-o", guardctlBin, "../cmd/guardctl").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build guardctl: %v", buildErr)
	}
	return guardctlBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// guardedSpec is spec wrapped so that guardctl kernel runs it. The guard
// keeps its control socket and its child's connection file in Jupyter's
// runtime dir: a short temporary one (unix socket paths are limited to 108
// bytes) instead of the user's.
func guardedSpec(t *testing.T, spec *kernelspec.KernelSpec) *kernelspec.KernelSpec {
	t.Helper()
	runtimeDir, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	t.Setenv("JUPYTER_RUNTIME_DIR", runtimeDir)
	g, err := kernelspec.Wrap(spec, guardctl(t))
	if err != nil {
		t.Fatal(err)
	}
	g.Dir = spec.Dir
	return g
}

// modes runs f on a direct ipykernel and on one under guardctl kernel.
func modes(t *testing.T, f func(t *testing.T, spec *kernelspec.KernelSpec)) {
	py := testPython(t)
	t.Run("direct", func(t *testing.T) { f(t, ipykernelSpec(t, py)) })
	t.Run("guarded", func(t *testing.T) { f(t, guardedSpec(t, ipykernelSpec(t, py))) })
}

// launch starts spec and shuts it down at the end of the test.
func launch(t *testing.T, spec *kernelspec.KernelSpec) *Kernel {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k, err := Launch(ctx, spec, LaunchOptions{RuntimeDir: t.TempDir(), Stderr: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Shutdown(context.Background()) })
	return k
}

// testWriter sends the kernel's stderr to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("kernel: %s", p)
	return len(p), nil
}

// testCtx bounds a step of a test so a broken kernel fails the test
// instead of hanging it; it is a safety net, not an assertion on time.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
