// Package sampler measures the kernel's memory while a cell runs: the RSS
// of its process tree, its cgroup's usage, optionally the machine's used
// memory and its GPU memory.
//
// It costs nothing while the kernel is idle: the loop sleeps on a channel
// until a cell starts (Kick) and takes no sample until the next one once
// the handler says the kernel is idle. During a cell the handler sets the
// pace (see Pace): long sleeps far from the next threshold, a few
// milliseconds close to it. Pushed events from the kernel's cgroup (v1
// usage thresholds armed at the guard's lines, v1 OOM notifications, v2
// memory.events and PSI) wake the loop at once.
package sampler
