package diagnosis

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"
)

// diagnoseCell runs a cell in a real python and diagnoses its death.
func diagnoseCell(t *testing.T, name string, count int) Diagnosis {
	t.Helper()
	ev := newCellRun(t, name, count).run(t)
	d := Diagnose(ev)
	t.Logf("%s:\n%s", name, strings.Join(d.Traceback, "\n"))
	return d
}

func TestSegfaultShowsStackAndUserLine(t *testing.T) {
	d := diagnoseCell(t, "segfault.py", 3)
	if d.Evidence.Exit.Signal != syscall.SIGSEGV {
		t.Fatalf("exit = %v, want SIGSEGV", d.Evidence.Exit)
	}
	if d.Cause != CauseSegfault {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseSegfault)
	}
	if d.Stack == nil || len(d.Stack.Frames) == 0 {
		t.Fatalf("no stack in the tail: %q", d.Evidence.Stderr)
	}
	i, ok := d.Stack.userFrame()
	if !ok || d.Stack.Frames[i].Line != 3 {
		t.Fatalf("user frame = %v (found %v), want line 3 of the cell", d.Stack.Frames, ok)
	}
	if lib, _ := d.Stack.library(); lib.name != "ctypes" || !lib.stdlib {
		t.Errorf("library = %+v, want ctypes from the standard library", lib)
	}
	want := "The kernel crashed with a segmentation fault (SIGSEGV) in ctypes, called from cell [3], at line 3: ctypes.string_at(0)."
	if d.Evalue != want {
		t.Errorf("Evalue =\n%s\nwant\n%s", d.Evalue, want)
	}
	if strings.Contains(strings.Join(d.Traceback, "\n"), "out of memory") {
		t.Error("a segfault is described as out of memory")
	}
}

func TestAbort(t *testing.T) {
	d := diagnoseCell(t, "abort.py", 4)
	if d.Cause != CauseAbort || d.Evidence.Exit.Signal != syscall.SIGABRT {
		t.Fatalf("cause = %s, exit = %v; want an abort by SIGABRT", d.Cause, d.Evidence.Exit)
	}
}

func TestGlibcDoubleFreeIsAnAbortWithItsReason(t *testing.T) {
	d := diagnoseCell(t, "double_free.py", 5)
	if d.Cause != CauseAbort {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseAbort)
	}
	if r := d.abortReason(); r == nil || r.Kind != SignGlibc || !strings.Contains(r.Message, "double free") {
		t.Fatalf("abort reason = %+v, want glibc's double free message", r)
	}
}

func TestExitCode(t *testing.T) {
	d := diagnoseCell(t, "exit3.py", 6)
	if d.Cause != CauseExit || d.Evidence.Exit.Code != 3 {
		t.Fatalf("cause = %s, exit = %v; want exit with code 3", d.Cause, d.Evidence.Exit)
	}
	if !slices.Contains(d.Traceback, "    saving results...") {
		t.Errorf("the traceback does not quote the last output line")
	}
}

func TestSelfSIGKILLIsAnOutsideKillWithoutOOMClaim(t *testing.T) {
	kmsg, err := NewKmsgWatcher()
	if err != nil {
		t.Logf("no kernel log: %v", err)
	}
	defer kmsg.Close()
	r := newCellRun(t, "sigkill.py", 7)
	ev := r.run(t)
	ev.KernelLog = kmsg.Collect([]int{ev.PID})
	d := Diagnose(ev)
	t.Logf("\n%s", strings.Join(d.Traceback, "\n"))
	if d.Cause != CauseOutsideKill {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseOutsideKill)
	}
	if strings.Contains(d.Evalue, "out-of-memory killer") {
		t.Errorf("Evalue claims an OOM kill: %s", d.Evalue)
	}
}

func TestCUDAErrorBeforeAbort(t *testing.T) {
	d := diagnoseCell(t, "cuda_abort.py", 8)
	if d.Evidence.Exit.Signal != syscall.SIGABRT {
		t.Fatalf("exit = %v, want SIGABRT", d.Evidence.Exit)
	}
	if d.Cause != CauseCUDA {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseCUDA)
	}
	if s := d.sign(SignCUDA); s.Message != "CUDA error: an illegal memory access was encountered" {
		t.Errorf("CUDA message = %q", s.Message)
	}
	if !strings.Contains(strings.Join(d.Traceback, "\n"), "CUDA_LAUNCH_BLOCKING") {
		t.Error("no CUDA_LAUNCH_BLOCKING advice")
	}
}

func TestPythonFatalError(t *testing.T) {
	d := diagnoseCell(t, "python_fatal.py", 9)
	if d.Cause != CausePythonFatal {
		t.Fatalf("cause = %s, want %s", d.Cause, CausePythonFatal)
	}
	if s := d.sign(SignPythonFatal); s.Message != "broken interpreter state in a test" {
		t.Errorf("fatal error message = %q", s.Message)
	}
}

func TestCppTerminateIsAnAbortWithTheException(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		testenv.Missing(t, "no g++ to build a C++ program")
	}
	bin := filepath.Join(t.TempDir(), "terminate")
	if out, err := exec.Command(gxx, "-o", bin, filepath.Join(testdata, "terminate.cc")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	tail := NewTail(4<<10, 50)
	cmd := exec.Command(bin)
	cmd.Stderr = tail
	if err := cmd.Run(); err == nil {
		t.Fatal("the program did not die")
	}
	d := Diagnose(Evidence{PID: cmd.Process.Pid, Exit: ExitStatusOf(cmd.ProcessState), Stderr: tail.Lines()})
	if d.Cause != CauseAbort {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseAbort)
	}
	want := "The kernel aborted (SIGABRT) after an uncaught C++ exception (std::runtime_error: tensor shapes do not match) while no cell was running."
	if d.Evalue != want {
		t.Errorf("Evalue =\n%s\nwant\n%s", d.Evalue, want)
	}
}

// TestTensorPoolRefusalThatCrashes: TensorFlow's allocator, held by the
// guard, refused a tensor and the op crashed: the death is put down to that
// limit, with what to change; without the guard's limit it is a segfault.
func TestTensorPoolRefusalThatCrashes(t *testing.T) {
	ev := newCellRun(t, "tensorpool_crash.py", 4).run(t)
	if d := Diagnose(ev); d.Cause != CauseSegfault {
		t.Errorf("without the guard's limit: cause = %s, want %s", d.Cause, CauseSegfault)
	}
	ev.TensorPool = 1229 << 20
	d := Diagnose(ev)
	text := strings.Join(d.Traceback, "\n")
	t.Logf("%s", text)
	if d.Cause != CauseCeiling {
		t.Fatalf("cause = %s, want %s", d.Cause, CauseCeiling)
	}
	want := "The kernel ended when TensorFlow's CPU allocator, which jupyter-guard holds to 1.2 GiB, refused a tensor (SIGSEGV) while running cell [4]."
	if d.Evalue != want {
		t.Errorf("Evalue =\n%s\nwant\n%s", d.Evalue, want)
	}
	for _, s := range []string{"TF_ENABLE_ONEDNN_OPTS=0", "batch_size", "OOM when allocating tensor with"} {
		if !strings.Contains(text, s) {
			t.Errorf("the diagnosis does not say %q", s)
		}
	}
}
