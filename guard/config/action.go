package config

import (
	"fmt"
	"slices"
	"strings"
)

// Action is what the guard does when the kernel's memory reaches the pause
// threshold.
type Action string

const (
	// Pause stops the kernel (SIGSTOP or the cgroup freezer) until the user
	// frees memory or lets it go on.
	Pause Action = "pause"
	// Interrupt sends the kernel an interrupt, as the stop button does.
	Interrupt Action = "interrupt"
	// Warn only warns, louder: the OOM killer may still strike.
	Warn Action = "warn"
)

// ParseAction reads an action name, in any case.
func ParseAction(s string) (Action, error) {
	return oneOf(s, "unknown action; ", Pause, Interrupt, Warn)
}

// Restart says who restarts a kernel that died.
type Restart string

const (
	// RestartGuard: the proxy starts the kernel again behind the same
	// ports and tells the cell what happened. A Jupyter server would
	// restart it anyway; this way its user keeps the notebook's session.
	RestartGuard Restart = "guard"
	// RestartClient: the proxy ends with the kernel, as a plain kernel
	// does, once it has told the running cell why. A client that restarts
	// no kernel (nbclient, papermill, nbconvert) then sees the death as
	// Jupyter's own (DeadKernelError) and stops, rather than go on in a
	// fresh kernel without the notebook's variables.
	RestartClient Restart = "client"
	// RestartAuto: guard when a Jupyter server started the kernel for a
	// notebook, else client (the supervisor tells which).
	RestartAuto Restart = "auto"
)

// Headless says whether a person can answer a pause.
type Headless string

const (
	// HeadlessOn: nobody can (nbconvert, papermill, nbclient, guardctl
	// run). No pause is made: the ceiling stops the cell, or, with the
	// ceiling off, an interrupt.
	HeadlessOn Headless = "on"
	// HeadlessOff: a person can (JupyterLab, Notebook, jupyter console).
	HeadlessOff Headless = "off"
	// HeadlessAuto: off when a Jupyter server started the kernel for a
	// notebook or console, else on (the supervisor tells which). jupyter
	// console's kernels are told off by jupyter-guard's provisioner.
	HeadlessAuto Headless = "auto"
)

// ParseHeadless reads on, off or auto, in any case.
func ParseHeadless(s string) (Headless, error) {
	return oneOf(s, "", HeadlessOn, HeadlessOff, HeadlessAuto)
}

// ParseRestart reads guard, client or auto, in any case.
func ParseRestart(s string) (Restart, error) {
	return oneOf(s, "unknown restart; ", RestartGuard, RestartClient, RestartAuto)
}

// oneOf reads one of words, in any case; else the error is what (a
// prefix) and the words to use.
func oneOf[T ~string](s, what string, words ...T) (T, error) {
	if w := T(strings.ToLower(strings.TrimSpace(s))); slices.Contains(words, w) {
		return w, nil
	}
	use := make([]string, len(words))
	for i, w := range words {
		use[i] = string(w)
	}
	last := len(use) - 1
	return "", fmt.Errorf("%suse %s or %s", what, strings.Join(use[:last], ", "), use[last])
}
