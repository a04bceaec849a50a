package diagnosis

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// A kernel that exits on SIGINT (xeus-python 0.19 exits with code 0) is
// not said to have ended itself: the interrupt, and who sent it, is named.
func TestADeathRightAfterAnInterruptIsPutDownToIt(t *testing.T) {
	at := time.Date(2026, 11, 24, 0, 20, 5, 0, time.UTC)
	cell := &Cell{ExecutionCount: 3}
	for _, tt := range []struct {
		name  string
		exit  ExitStatus
		guard bool
		want  string
		says  string
	}{
		{"guard, exit 0", ExitStatus{Code: 0}, true,
			"The kernel exited with code 0 on the interrupt jupyter-guard sent at 00:20:05 to stop the cell before the kernel ran out of memory while running cell [3].",
			"was about to reach the memory limit"},
		{"user, SIGINT", ExitStatus{Code: -1, Signal: syscall.SIGINT}, false,
			"The kernel was killed by SIGINT on the interrupt (■) sent at 00:20:05 while running cell [3].",
			"use a kernel that survives an interrupt"},
	} {
		d := Diagnose(Evidence{PID: 9, Exit: tt.exit, Cell: cell, Kernel: "xeus-python 0.19.0", Language: "python",
			Interrupt: &Interrupt{At: at, ByGuard: tt.guard}})
		text := strings.Join(d.Traceback, "\n")
		if d.Cause != CauseInterrupt || d.Evalue != tt.want {
			t.Errorf("%s: %s %q, want %q", tt.name, d.Cause, d.Evalue, tt.want)
		}
		if !strings.Contains(text, "xeus-python 0.19.0 ends when it is interrupted") || !strings.Contains(strings.Join(strings.Fields(text), " "), tt.says) {
			t.Errorf("%s: the advice does not name the kernel or the sender:\n%s", tt.name, text)
		}
		if strings.Contains(text, "exit(), quit()") {
			t.Errorf("%s: blames the user's code:\n%s", tt.name, text)
		}
	}
}

// A crash after an interrupt is still a crash, and without an interrupt an
// exit is an exit.
func TestAnInterruptDoesNotHideACrashOrExplainAnExit(t *testing.T) {
	in := &Interrupt{At: time.Now()}
	if d := Diagnose(Evidence{Exit: ExitStatus{Code: -1, Signal: syscall.SIGSEGV}, Interrupt: in}); d.Cause != CauseSegfault {
		t.Errorf("SIGSEGV after an interrupt: %s", d.Cause)
	}
	if d := Diagnose(Evidence{Exit: ExitStatus{Code: -1, Signal: syscall.SIGKILL}, Interrupt: in}); d.Cause != CauseOutsideKill {
		t.Errorf("SIGKILL after an interrupt: %s", d.Cause)
	}
	if d := Diagnose(Evidence{Exit: ExitStatus{Code: 0}}); d.Cause != CauseExit {
		t.Errorf("exit 0 without an interrupt: %s", d.Cause)
	}
}

// Advice for a kernel in another language does not send R users to Python.
func TestAdviceForOtherLanguagesLeavesPythonOut(t *testing.T) {
	for _, ev := range []Evidence{
		{Exit: ExitStatus{Code: -1, Signal: syscall.SIGSEGV}, Language: "R"},
		{Exit: ExitStatus{Code: 1}, Language: "R"},
		{Exit: ExitStatus{Code: 0}, Language: "bash"},
	} {
		text := strings.Join(Diagnose(ev).Traceback, "\n")
		for _, py := range []string{"python", "os._exit", "sys.exit"} {
			if strings.Contains(text, py) {
				t.Errorf("%s kernel, %v: the advice says %q:\n%s", ev.Language, ev.Exit, py, text)
			}
		}
	}
	if text := strings.Join(Diagnose(Evidence{Exit: ExitStatus{Code: -1, Signal: syscall.SIGSEGV}}).Traceback, "\n"); !strings.Contains(text, "python -X faulthandler") {
		t.Errorf("a Python kernel's crash lost its faulthandler advice:\n%s", text)
	}
}
