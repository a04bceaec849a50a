package diagnosis

import (
	"fmt"
	"os"
	"syscall"
)

// ExitStatus is how the kernel process ended, as its parent saw it.
type ExitStatus struct {
	// Code is the exit code; -1 when a signal ended the process.
	Code int
	// Signal ended the process; 0 when it exited.
	Signal     syscall.Signal
	CoreDumped bool
}

// ExitStatusOf reads the wait status of a reaped process.
func ExitStatusOf(ps *os.ProcessState) ExitStatus {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ExitStatus{Code: ps.ExitCode()}
	}
	return ExitStatus{Code: -1, Signal: ws.Signal(), CoreDumped: ws.CoreDump()}
}

// shellSignalBase is what a shell adds to a signal number when it reports a
// child's death by that signal as its own exit code (137 = 128 + SIGKILL).
const shellSignalBase = 128

// killedBy says whether sig ended the process, directly or through a
// wrapper shell in the kernelspec that turned it into 128+sig.
func (e ExitStatus) killedBy(sig syscall.Signal) bool {
	return e.Signal == sig || (e.Signal == 0 && e.Code == shellSignalBase+int(sig))
}

// endedAs is "exited with code 0" or "was killed by SIGINT".
func (e ExitStatus) endedAs() string {
	if e.Signal == 0 {
		return fmt.Sprintf("exited with code %d", e.Code)
	}
	return "was killed by " + signalName(e.Signal)
}

// abnormal is any death other than a clean exit(0).
func (e ExitStatus) abnormal() bool { return e.Signal != 0 || e.Code != 0 }

// String describes the status in the words of a wait status,
// e.g. "killed by SIGSEGV (signal 11), core dumped".
func (e ExitStatus) String() string {
	if e.Signal == 0 {
		s := fmt.Sprintf("exited with code %d", e.Code)
		if e.Code > shellSignalBase && e.Code < shellSignalBase+65 {
			sig := syscall.Signal(e.Code - shellSignalBase)
			s += fmt.Sprintf(" (a shell reports a death by %s as %d)", signalName(sig), e.Code)
		}
		return s
	}
	s := fmt.Sprintf("killed by %s (signal %d)", signalName(e.Signal), int(e.Signal))
	if e.CoreDumped {
		s += ", core dumped"
	}
	return s
}

// signalNames are the signals a kernel dies of in practice; the syscall
// package only has their descriptions, not their names.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
	syscall.SIGSYS:  "SIGSYS",
}

func signalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
