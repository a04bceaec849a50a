package notebook

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testPython is the interpreter of a venv with nbformat, the reference
// every written notebook is compared with.
func testPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("JUPYTER_GUARD_TEST_PYTHON")
	if py == "" {
		t.Skip("JUPYTER_GUARD_TEST_PYTHON is unset; set it to the python of a venv with nbformat to compare with what nbformat writes")
	}
	return py
}

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
