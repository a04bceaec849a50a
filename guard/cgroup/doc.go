// Package cgroup finds the memory cgroup of a process and reads what the
// guard needs from it: usage, the effective limit and where it comes from,
// the OOM-kill counter, pushed notifications, and the primitives to pause a
// group before the OOM killer acts.
//
// Both hierarchies are supported. On cgroup v1 the memory controller has its
// own mount; on cgroup v2 everything lives on the unified mount and a cgroup
// is usable only if the memory controller is enabled for it (it has
// memory.current). All paths are resolved under a Host root, so tests run on
// fake trees as well as on the live system.
package cgroup
