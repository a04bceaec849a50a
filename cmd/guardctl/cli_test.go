package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// TestCommandLine runs the real binary as a user at a terminal would:
// help goes to stdout with exit status 0, a mistake gets one line and the
// usage on stderr with exit status 2, and long options work.
func TestCommandLine(t *testing.T) {
	bin := buildGuardctl(t, t.TempDir())
	runtime := t.TempDir()
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "JUPYTER_RUNTIME_DIR="+runtime, "HOME="+t.TempDir())
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	helps := [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "run"}, {"run", "--help"}, {"run", "-h"}}
	for _, c := range commands {
		if !c.hidden {
			helps = append(helps, []string{c.name, "--help"}, []string{"help", c.name})
		}
	}
	for _, args := range helps {
		code, stdout, stderr := run(args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: guardctl ") && !strings.HasPrefix(stdout, "guardctl — ") {
			t.Errorf("guardctl %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if _, stdout, _ := run("help", "cells"); !strings.HasPrefix(stdout, "Usage: guardctl cells [--json] KERNEL\n") {
		t.Errorf("help cells: %q", stdout)
	}
	if _, stdout, _ := run("help", "run"); !strings.Contains(stdout, "-o, --output OUT.ipynb") || !strings.Contains(stdout, "--limit SIZE") {
		t.Errorf("help run does not show its long options:\n%s", stdout)
	}

	for _, args := range [][]string{{}, {"nope"}, {"help", "nope"}, {"status", "--nope"}, {"cells"}, {"resume", "a", "b"}, {"status", "extra"}} {
		code, stdout, stderr := run(args...)
		if code != 2 || stdout != "" || stderr == "" {
			t.Errorf("guardctl %s: exit %d, stdout %q, stderr %q; want 2 and a message on stderr", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if _, _, stderr := run("cells"); !strings.HasPrefix(stderr, "guardctl cells: missing KERNEL\nUsage: guardctl cells [--json] KERNEL\n") {
		t.Errorf("cells without a kernel: %q", stderr)
	}

	// Long and single-dash options alike; no kernel runs here.
	for _, args := range [][]string{{"status", "--json"}, {"status", "-json"}} {
		if code, stdout, stderr := run(args...); code != 0 || strings.TrimSpace(stdout) != "[]" {
			t.Errorf("guardctl %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "m.prom")
	if code, _, stderr := run("metrics", "--output", out); code != 0 {
		t.Errorf("metrics --output: exit %d: %s", code, stderr)
	} else if _, err := os.Stat(out); err != nil {
		t.Errorf("metrics --output wrote nothing: %v", err)
	}

	// An output that cannot be written fails before a kernel starts.
	nb := filepath.Join("..", "..", "testdata", "demo", "grow.ipynb")
	code, stdout, stderr := run("run", nb, "-o", "/nonexistent/x.ipynb")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "/nonexistent/x.ipynb") || strings.Contains(stderr, "starting") {
		t.Errorf("run -o /nonexistent/x.ipynb: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestInstallAsIPykernel: guardctl install with ipykernel's options writes
// the spec `python -m ipykernel install` writes with the same options,
// guarded; uninstall takes it away again.
func TestInstallAsIPykernel(t *testing.T) {
	py := testenv.Python(t, "ipykernel")
	bin := buildGuardctl(t, t.TempDir())
	env := append(os.Environ(), "HOME="+t.TempDir(), "JUPYTER_PATH=", "JUPYTER_DATA_DIR="+t.TempDir())
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	opts := []string{"--name", "py-8g", "--display-name", "Python (8 GiB)", "--env", "JUPYTER_GUARD_LIMIT", "8GiB", "--env", "OMP_NUM_THREADS", "2"}
	plainPrefix, ourPrefix := t.TempDir(), t.TempDir()
	run(py, append([]string{"-m", "ipykernel", "install", "--prefix", plainPrefix}, opts...)...)
	out := run(bin, append([]string{"install", "--python", py, "--prefix", ourPrefix}, opts...)...)
	dir := filepath.Join(ourPrefix, "share", "jupyter", "kernels", "py-8g")
	if !strings.Contains(out, "installed py-8g (guards python3) in "+dir) || !strings.Contains(out, "guardctl uninstall --prefix "+ourPrefix+" py-8g") {
		t.Errorf("install says:\n%s", out)
	}

	plain, err := kernelspec.ReadSpec(filepath.Join(plainPrefix, "share", "jupyter", "kernels", "py-8g"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := kernelspec.ReadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ours.DisplayName != plain.DisplayName || ours.Language != plain.Language || !maps.Equal(ours.Env, plain.Env) {
		t.Errorf("guarded %q %q %v, ipykernel's %q %q %v", ours.DisplayName, ours.Language, ours.Env, plain.DisplayName, plain.Language, plain.Env)
	}
	sep := slices.Index(ours.Argv, "--")
	if sep < 0 || !slices.Equal(ours.Argv[sep+1:], plain.Argv) || ours.Argv[3] != bin {
		t.Errorf("argv %q does not run guardctl with ipykernel's %q", ours.Argv, plain.Argv)
	}
	for key, value := range plain.Metadata {
		if key != "supported_encryption" && string(ours.Metadata[key]) != string(value) {
			t.Errorf("metadata %s = %s, ipykernel's %s", key, ours.Metadata[key], value)
		}
	}
	if ours.Wraps() != "python3" {
		t.Errorf("wraps %q", ours.Wraps())
	}
	entries := func(dir string) (names []string) {
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			names = append(names, de.Name())
		}
		return names
	}
	if got, want := entries(dir), entries(plain.Dir); !slices.Equal(got, want) {
		t.Errorf("files %q, ipykernel's %q", got, want)
	}

	if out := run(bin, "uninstall", "--prefix", ourPrefix, "py-8g"); !strings.Contains(out, "removed py-8g") {
		t.Errorf("uninstall says %q", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after uninstall: %v", dir, err)
	}
}
