// Package testenv finds what the tests that use the real Jupyter stack need,
// and says what a missing piece means: a skip on a developer's machine, a
// failure under `make test` (JUPYTER_GUARD_TEST_STRICT=1), which provides
// everything these tests ask for, so a skip there would hide a test that CI
// silently stopped running.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Python is the interpreter of the test venv: $JUPYTER_GUARD_TEST_PYTHON,
// else this checkout's .venv/bin/python (`make venvs` creates it). needs
// names what the test uses from it (e.g. "ipykernel"); without a venv the
// test is Missing one.
func Python(t testing.TB, needs string) string {
	t.Helper()
	if py := os.Getenv("JUPYTER_GUARD_TEST_PYTHON"); py != "" {
		return py
	}
	py := filepath.Join(repoRoot(), ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		Missing(t, "no test venv: JUPYTER_GUARD_TEST_PYTHON is unset and %s is missing (make venvs creates it); this test needs a python with %s", py, needs)
	}
	return py
}

// Missing stops a test that cannot run for want of something its
// environment should give it: skipped, or failed under make test.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("JUPYTER_GUARD_TEST_STRICT") == "1" {
		t.Fatalf("missing from the test environment (make test provides it): "+format, args...)
	}
	t.Skipf(format, args...)
}

// repoRoot is the checkout this file was compiled from.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
