// Package sampler measures the kernel's memory while a cell runs: the RSS
// of its process tree, its cgroup's usage, optionally the machine's used
// memory and its GPU memory. The tree and the figure the guard decides on
// are read at every sample, the other figures at most every 250 ms.
//
// It costs nothing while the kernel is idle: once the handler says the
// kernel is idle, the loop takes no sample until asked (Kick, Within), and
// after a second or two without one it sleeps on a channel. In that
// second it looks by itself, so the next cell's ask need not wake it. During a cell the handler sets the
// pace (see Pace): long sleeps far from the next threshold, a few
// milliseconds close to it. Pushed events from the kernel's cgroup wake the
// loop at once: on v1 a ladder of usage thresholds the guard asks for (see
// Sampler.Arm) and OOM notifications, on v2 changes of memory.events and
// memory pressure (PSI). The loop also measures how late its own timers
// fire (Sample.Lag): on a busy machine the guard plans for being kept from
// running that long.
package sampler
