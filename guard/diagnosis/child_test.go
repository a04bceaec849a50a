package diagnosis

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// testdata is shared with the other packages' test data at the module root.
const testdata = "../../testdata/diagnosis"

// testPython is the interpreter the crash tests run.
func testPython(t *testing.T) string { return testenv.Python(t, "faulthandler") }

// cellRun is a real child process run as the proxy runs a kernel: its
// output teed through Tails, its death seen as a wait status.
type cellRun struct {
	cmd            *exec.Cmd
	stderr, stdout *Tail
	cell           *Cell
}

// newCellRun prepares a python running testdata/diagnosis/cells/NAME as
// notebook cell [count].
func newCellRun(t *testing.T, name string, count int) *cellRun {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(testdata, "cells", name))
	if err != nil {
		t.Fatal(err)
	}
	r := &cellRun{
		stderr: NewTail(64<<10, 200),
		stdout: NewTail(64<<10, 200),
		cell:   &Cell{ExecutionCount: count, Code: string(src)},
	}
	dir, err := filepath.Abs(testdata) // the child runs in its own directory
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(testPython(t), filepath.Join(dir, "run_cell.py"), filepath.Join(dir, "cells", name))
	r.cmd.Dir = t.TempDir() // where a core file would land
	r.cmd.Stderr = r.stderr
	r.cmd.Stdout = r.stdout
	return r
}

// wait reaps the child and gathers the evidence the proxy would have.
func (r *cellRun) wait(t *testing.T) Evidence {
	t.Helper()
	err := r.cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return Evidence{
		KernelID: "test-kernel",
		PID:      r.cmd.Process.Pid,
		Exit:     ExitStatusOf(r.cmd.ProcessState),
		Stderr:   r.stderr.Lines(),
		Stdout:   r.stdout.Lines(),
		Cell:     r.cell,
	}
}

// run starts the child and waits for its death.
func (r *cellRun) run(t *testing.T) Evidence {
	t.Helper()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r.wait(t)
}
