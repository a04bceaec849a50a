package diagnosis

import (
	"strings"
	"syscall"
	"testing"
)

func TestStackOfRealIPykernelCrash(t *testing.T) {
	st := findStack(stderrOf(t, "ipykernel-numpy-segfault.stderr"))
	if st == nil || st.Header != "Fatal Python error: Segmentation fault" {
		t.Fatalf("stack = %+v", st)
	}
	// The crashing thread's block, not the other threads' listed before it.
	if f := st.Frames[0]; !strings.HasSuffix(f.File, "numpy/_core/_methods.py") || f.Func != "_sum" {
		t.Errorf("innermost frame = %+v", f)
	}
	i, ok := st.userFrame()
	if !ok || st.Frames[i].Line != 5 || st.Frames[i].Func != "<module>" {
		t.Errorf("user frame = %d %v", i, ok)
	}
	if lib, ok := st.library(); !ok || lib != (pkg{name: "numpy"}) {
		t.Errorf("library = %+v", lib)
	}
}

// faulthandler without all_threads, terminal IPython's cell names, and a
// function defined in an earlier cell.
func TestStackCellNames(t *testing.T) {
	out := []string{
		"Fatal Python error: Bus error",
		"",
		"Stack (most recent call first):",
		"  Garbage-collecting",
		`  File "/opt/venv/lib/python3.12/site-packages/mmlib/io.py", line ??? in load`,
		`  File "<ipython-input-4-1f2e3d4c5b6a>", line 3 in read_all`,
		`  File "<ipython-input-7-a0b1c2d3e4f5>", line 1 in <module>`,
		`  File "/opt/venv/lib/python3.12/site-packages/IPython/core/interactiveshell.py", line 3577 in run_code`,
		"",
		"Extension modules: numpy.core._multiarray_umath (total: 1)",
	}
	d := Diagnose(Evidence{
		Exit:   ExitStatus{Code: -1, Signal: syscall.SIGBUS},
		Stderr: out,
		Cell:   &Cell{ExecutionCount: 7, Code: "data = read_all(paths)"},
	})
	want := "The kernel crashed with a bus error (SIGBUS) in mmlib, called from read_all(), line 3 of cell [4], while running cell [7]."
	if d.Evalue != want {
		t.Errorf("Evalue =\n%s\nwant\n%s", d.Evalue, want)
	}
	if len(d.Stack.Frames) != 4 {
		t.Errorf("frames = %+v", d.Stack.Frames)
	}
}

func TestNoStackWithoutFaulthandler(t *testing.T) {
	out := []string{"Current thread 0x00007f (most recent call first):", `  File "x.py", line 1 in f`}
	if st := findStack(out); st != nil {
		t.Errorf("a dump without a fatal error header was taken for a crash: %+v", st)
	}
}
