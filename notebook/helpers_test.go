package notebook

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// testPython is the interpreter of the test venv; the test is skipped without it.
func testPython(t *testing.T) string { return testenv.Python(t, "nbformat") }

// nbformatRewrite is what nbformat writes after reading path.
func nbformatRewrite(t *testing.T, py, path string) []byte {
	t.Helper()
	cmd := exec.Command(py, "-c", "import nbformat, sys; nbformat.write(nbformat.read(sys.argv[1], 4), sys.stdout)", path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nbformat on %s: %v", path, err)
	}
	return out
}

// roundTripFiles are the varied notebooks of testdata/notebooks/run/roundtrip.
func roundTripFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "notebooks", "run", "roundtrip", "*.ipynb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no round-trip notebooks: %v", err)
	}
	return files
}
