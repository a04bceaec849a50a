// Package nbexec runs a notebook's code cells on a kernel and records what
// they produce, the way nbclient (jupyter nbconvert --execute, papermill)
// does: outputs, execution counts, the timing metadata under
// metadata.execution, the kernel's language_info, and a stop at the first
// cell that raises unless errors are allowed.
package nbexec
