package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// runFixture is a place to run guardctl run: a directory holding a copy of
// one test notebook, and a Jupyter whose only python3 kernelspec is
// ipykernel on the test Python.
type runFixture struct {
	guardctl string
	dir      string
	notebook string // path of the copy
	env      []string
	python   string
}

func newRunFixture(t *testing.T, guardctl, py, name string) *runFixture {
	t.Helper()
	root := t.TempDir()
	kernels := filepath.Join(root, "jupyter", "kernels", "python3")
	if err := os.MkdirAll(kernels, 0o755); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{
		"argv":         []string{py, "-m", "ipykernel_launcher", "-f", "{connection_file}"},
		"display_name": "Python 3 (test)",
		"language":     "python",
	})
	if err := os.WriteFile(filepath.Join(kernels, "kernel.json"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &runFixture{guardctl: guardctl, dir: filepath.Join(root, "work"), python: py}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "notebooks", "run", name))
	if err != nil {
		t.Fatal(err)
	}
	f.notebook = filepath.Join(f.dir, name)
	if err := os.WriteFile(f.notebook, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The guard's control socket goes in the runtime dir: keep its path
	// short, unix socket paths are limited to 108 bytes.
	runtimeDir, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	f.env = append(os.Environ(),
		"HOME="+root,
		"JUPYTER_PATH="+filepath.Join(root, "jupyter"),
		"JUPYTER_DATA_DIR="+filepath.Join(root, "data"),
		"JUPYTER_RUNTIME_DIR="+runtimeDir,
		"JUPYTER_CONFIG_DIR="+filepath.Join(root, "config"),
	)
	return f
}

// buildGuardctl builds this command into dir.
func buildGuardctl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "guardctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build guardctl: %v\n%s", err, out)
	}
	return bin
}

// TestRun runs notebooks with a real guardctl binary, built once, on real
// ipykernels.
func TestRun(t *testing.T) {
	py := testenv.Python(t, "ipykernel and nbconvert")
	bin := buildGuardctl(t, t.TempDir())
	for _, tc := range []struct {
		name string
		test func(*testing.T, func(notebook string) *runFixture)
	}{
		{"matches nbconvert", testRunMatchesNbconvert},
		{"stops at an error", testRunStopsAtErrorCell},
		{"allow errors", testRunAllowErrors},
		{"kernel died", testRunKernelDied},
		{"interrupt", testRunInterrupt},
		{"timeout", testRunTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.test(t, func(notebook string) *runFixture { return newRunFixture(t, bin, py, notebook) })
		})
	}
}

// command prepares guardctl with args in the fixture's directory.
func (f *runFixture) command(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(f.guardctl, args...)
	cmd.Dir = f.dir
	cmd.Env = f.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// run runs guardctl to its end and returns its exit status and output.
func (f *runFixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd, stdout, stderr := f.command(t, args...)
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	t.Logf("guardctl %s\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), stderr, stdout)
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// readNotebookJSON reads a notebook as plain JSON, independently of package notebook.
func readNotebookJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb map[string]any
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return nb
}

func notebookCells(nb map[string]any) []map[string]any {
	var out []map[string]any
	for _, c := range nb["cells"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// normalisedRun drops what differs between two runs of the same notebook:
// the times in metadata.execution; and merges consecutive stream outputs
// of one name, which nbclient keeps apart when the kernel happened to send
// them in several messages.
func normalisedRun(nb map[string]any) map[string]any {
	for _, c := range notebookCells(nb) {
		if times, ok := c["metadata"].(map[string]any)["execution"].(map[string]any); ok {
			for k := range times {
				times[k] = "<time>"
			}
		}
		outs, _ := c["outputs"].([]any)
		var merged []any
		for _, o := range outs {
			o := o.(map[string]any)
			if n := len(merged); n > 0 && o["output_type"] == "stream" {
				last := merged[n-1].(map[string]any)
				if last["output_type"] == "stream" && last["name"] == o["name"] {
					last["text"] = streamText(last["text"]) + streamText(o["text"])
					continue
				}
			}
			if o["output_type"] == "stream" {
				o["text"] = streamText(o["text"])
			}
			merged = append(merged, o)
		}
		if outs != nil {
			c["outputs"] = merged
		}
	}
	return nb
}

func streamText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	for _, l := range v.([]any) {
		b.WriteString(l.(string))
	}
	return b.String()
}

var runTimestampRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"`)

// testRunMatchesNbconvert runs a clean notebook with guardctl run and with
// jupyter nbconvert --execute: the notebooks written must be the same,
// execution times aside, down to the bytes.
func testRunMatchesNbconvert(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("clean.ipynb")
	code, stdout, stderr := f.run(t, "run", f.notebook, "-o", "ours.ipynb")
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	nbconvert := exec.Command(f.python, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
		"--output", "theirs.ipynb", f.notebook)
	nbconvert.Dir, nbconvert.Env = f.dir, f.env
	if out, err := nbconvert.CombinedOutput(); err != nil {
		t.Fatalf("nbconvert: %v\n%s", err, out)
	}
	ours, theirs := filepath.Join(f.dir, "ours.ipynb"), filepath.Join(f.dir, "theirs.ipynb")
	if a, b := normalisedRun(readNotebookJSON(t, ours)), normalisedRun(readNotebookJSON(t, theirs)); !reflect.DeepEqual(a, b) {
		ja, _ := json.MarshalIndent(a, "", " ")
		jb, _ := json.MarshalIndent(b, "", " ")
		t.Fatalf("guardctl run wrote\n%s\nnbconvert wrote\n%s", ja, jb)
	}
	a, _ := os.ReadFile(ours)
	b, _ := os.ReadFile(theirs)
	if runTimestampRE.ReplaceAllString(string(a), "T") != runTimestampRE.ReplaceAllString(string(b), "T") {
		t.Fatal("same content, but not written as nbformat writes it")
	}

	// One progress line per code cell that ran, and the table.
	for _, want := range []string{"cell 2/7  [1]  ok", "cell 7/7  [5]  ok", "wrote ours.ipynb"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	for _, want := range []string{"CELL  EXEC  STATUS  TIME", "[4]   ok", "update_display(HTML('<i>updated</i>'), display_id='status')"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}

func testRunStopsAtErrorCell(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("error.ipynb")
	before, _ := os.ReadFile(f.notebook)
	code, _, stderr := f.run(t, "run", "error.ipynb")
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	for _, want := range []string{"cell 4 (id boom) of error.ipynb raised ZeroDivisionError: division by zero",
		"----> 4 divide(x, 0)", "wrote the notebook so far to error.out.ipynb"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Error("colour codes written to a stderr that is not a terminal")
	}
	if after, _ := os.ReadFile(f.notebook); !bytes.Equal(before, after) {
		t.Error("the input notebook changed")
	}
	cs := notebookCells(readNotebookJSON(t, filepath.Join(f.dir, "error.out.ipynb")))
	// The cell tagged raises-exception may fail; the run stops at the next.
	if cs[1]["execution_count"] != 2.0 || cs[3]["execution_count"] != 3.0 || cs[4]["execution_count"] != nil {
		t.Fatalf("execution counts %v %v %v", cs[1]["execution_count"], cs[3]["execution_count"], cs[4]["execution_count"])
	}
	outs := cs[3]["outputs"].([]any)
	if len(outs) != 1 || outs[0].(map[string]any)["ename"] != "ZeroDivisionError" {
		t.Fatalf("outputs of the failing cell: %v", outs)
	}
}

func testRunAllowErrors(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("error.ipynb")
	if code, _, _ := f.run(t, "run", "--allow-errors", "error.ipynb", "-o", "all.ipynb"); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	cs := notebookCells(readNotebookJSON(t, filepath.Join(f.dir, "all.ipynb")))
	if outs := cs[4]["outputs"].([]any); len(outs) != 1 || streamText(outs[0].(map[string]any)["text"]) != "after\n" {
		t.Fatalf("the cell after the error: %v", outs)
	}
}

// testRunKernelDied: a cell that kills its kernel ends the run with the
// guard's diagnosis on stderr, the same text the notebook gets.
func testRunKernelDied(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("die.ipynb")
	code, _, stderr := f.run(t, "run", "die.ipynb")
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if !strings.Contains(stderr, "the kernel died in cell 2 (id kill) of die.ipynb") {
		t.Error("stderr does not say which cell the kernel died in")
	}
	cs := notebookCells(readNotebookJSON(t, filepath.Join(f.dir, "die.out.ipynb")))
	outs := cs[1]["outputs"].([]any)
	if len(outs) != 1 || outs[0].(map[string]any)["ename"] != "KernelDied" {
		t.Fatalf("outputs of the killing cell: %v", outs)
	}
	for _, line := range outs[0].(map[string]any)["traceback"].([]any) {
		if !strings.Contains(stderr, line.(string)) {
			t.Errorf("stderr lacks the diagnosis line %q", line)
		}
	}
	if cs[2]["execution_count"] != nil {
		t.Error("a cell after the death ran")
	}
}

// testRunInterrupt: Ctrl-C interrupts the running cell and ends the run
// there, with the notebook so far written.
func testRunInterrupt(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("sleep.ipynb")
	cmd, _, stderr := f.command(t, "run", "sleep.ipynb")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net, not an assertion
	defer cancel()
	for !fileExists(filepath.Join(f.dir, "started")) {
		select {
		case <-ctx.Done():
			cmd.Process.Kill()
			t.Fatalf("the cell never started; stderr:\n%s", stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	t.Logf("stderr:\n%s", stderr)
	if code := cmd.ProcessState.ExitCode(); code != exitRunInterrupted {
		t.Fatalf("exit status %d (%v), want %d", code, err, exitRunInterrupted)
	}
	cs := notebookCells(readNotebookJSON(t, filepath.Join(f.dir, "sleep.out.ipynb")))
	outs := cs[0]["outputs"].([]any)
	if len(outs) != 1 || outs[0].(map[string]any)["ename"] != "KeyboardInterrupt" {
		t.Fatalf("outputs of the interrupted cell: %v", outs)
	}
	if cs[1]["execution_count"] != nil {
		t.Error("the run went on after the interrupt")
	}
}

func testRunTimeout(t *testing.T, fixture func(string) *runFixture) {
	f := fixture("sleep.ipynb")
	code, _, stderr := f.run(t, "run", "--timeout", "1s", "sleep.ipynb")
	if code != 1 || !strings.Contains(stderr, "cell 1 (id sleep) of sleep.ipynb did not finish within 1s") {
		t.Fatalf("exit status %d", code)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestRunArgs: options go before or after the notebook; mistakes are
// usage errors found before any kernel starts.
func TestRunArgs(t *testing.T) {
	o, err := parseRunArgs([]string{"--kernel", "k", "nb.ipynb", "-o", "x.ipynb", "--allow-errors", "--limit", "2GiB", "--action", "warn"})
	if err != nil {
		t.Fatal(err)
	}
	want := runOptions{notebook: "nb.ipynb", kernel: "k", output: "x.ipynb", allowErrors: true, limit: "2GiB", action: "warn", timeout: 10 * time.Minute}
	if o != want {
		t.Fatalf("parsed %+v", o)
	}
	// As papermill and nbconvert users type it: the notebook first.
	if o, err := parseRunArgs([]string{"nb.ipynb", "--output", "y.ipynb", "--timeout=1m"}); err != nil || o.output != "y.ipynb" || o.notebook != "nb.ipynb" || o.timeout != time.Minute {
		t.Fatalf("parsed %+v, %v", o, err)
	}
	dir := t.TempDir()
	if o, err := parseRunArgs([]string{dir + "/nb.ipynb"}); err != nil || o.output != dir+"/nb.out.ipynb" {
		t.Fatalf("parsed %+v, %v", o, err)
	}
	noEnv := func(string) string { return "" }
	if env := guardEnv(o, noEnv); !reflect.DeepEqual(env, []string{"JUPYTER_GUARD_HEADLESS=on", "JUPYTER_GUARD_LIMIT=2GiB", "JUPYTER_GUARD_ACTION=warn", "JUPYTER_GUARD_RESTART=guard"}) {
		t.Fatalf("env %q", env)
	}
	// Headless, a pause would hang the run: the guard is told so.
	if env := guardEnv(runOptions{}, noEnv); !reflect.DeepEqual(env, []string{"JUPYTER_GUARD_HEADLESS=on", "JUPYTER_GUARD_RESTART=guard"}) {
		t.Errorf("default env %q", env)
	}
	if env := guardEnv(runOptions{}, func(string) string { return "set" }); len(env) != 0 {
		t.Errorf("env %q overrides the caller's JUPYTER_GUARD_HEADLESS or JUPYTER_GUARD_RESTART", env)
	}
	for _, bad := range [][]string{{}, {"a.ipynb", "b.ipynb"}, {"--action", "explode", "a.ipynb"}, {"--limit", "lots", "a.ipynb"}, {"--nope", "a.ipynb"}, {"a.ipynb", "-o", "/nonexistent/dir/out.ipynb"}, {"a.ipynb", "-o", "."}} {
		if _, err := parseRunArgs(bad); err != exitCode(exitRunUsage) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}
