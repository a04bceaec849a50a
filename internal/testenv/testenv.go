// Package testenv finds what the tests that use the real Jupyter stack need.
package testenv

import (
	"os"
	"testing"
)

// Python is the interpreter of the test venv (JUPYTER_GUARD_TEST_PYTHON;
// make test sets it). Without it the test is skipped, saying what the
// venv must hold (e.g. "ipykernel") for it to run.
func Python(t testing.TB, needs string) string {
	t.Helper()
	py := os.Getenv("JUPYTER_GUARD_TEST_PYTHON")
	if py == "" {
		t.Skipf("JUPYTER_GUARD_TEST_PYTHON is unset; set it to the python of a venv with %s to run this test", needs)
	}
	return py
}
