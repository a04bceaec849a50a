// Package freeze pauses a process tree before the OOM killer can act, and
// lets it go again.
//
// Freezing sends SIGSTOP to every process of the tree and rescans until a
// scan finds no process it has not stopped: a process that was forking while
// the first signals went out has a child the first scan did not see. A
// process signalled in the middle of a fork finishes it before it stops, so
// each scan waits until the processes signalled before it have stopped; the
// scans converge because a stopped process cannot fork. Thawing
// sends SIGCONT to exactly the processes the freeze stopped, checking their
// start time so a pid reused while the tree was paused is left alone.
//
// SIGSTOP works everywhere, without privileges, whatever the cgroup setup.
// The cgroup freezers (v1 freezer.state, v2 cgroup.freeze) would need the
// kernel in a cgroup of the guard's own; they are not used here.
//
// A frozen process frees no memory and answers nothing: heartbeats, signals
// other than SIGKILL and SIGCONT, and Jupyter messages all wait. Thaw before
// an interrupt, a restart or a shutdown.
package freeze
