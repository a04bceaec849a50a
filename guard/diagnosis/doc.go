// Package diagnosis explains a kernel's death in the notebook cell that
// was running, instead of Jupyter's bare "The kernel appears to have died".
//
// The proxy, as the kernel's parent, gathers the evidence:
//
//   - at child start: a KmsgWatcher (NewKmsgWatcher; a nil one is fine where
//     the kernel log cannot be read), the cgroup's OOM-kill counter, and one
//     Tail per output stream that the child's stderr and stdout are teed
//     through;
//   - at death: the wait status (ExitStatusOf), the counter again,
//     KmsgWatcher.Collect with the pids of the kernel's process tree, the
//     tails' Lines once the pipes are drained, and the ledger's memory story.
//
// Diagnose turns that Evidence into a Diagnosis: a Cause, decided by the
// ordered rules documented on Diagnose, and the text to show (Ename, Evalue,
// Traceback). DeathLog keeps one JSON line per death for guardctl.
//
// Python's faulthandler stack only reaches the proxy if the kernel writes
// it to the real fd 2: ipykernel's default capture_fd_output=True points fd
// 2 at a pipe read by a thread of the kernel itself, which dies with it.
package diagnosis
