// Package proctree finds the kernel's process tree in /proc and measures its
// memory. Every function reads /proc as it is now; a process that exits while
// it is being read is treated as gone, never as an error. HostProc maps the
// host's pids, by which the GPU driver names processes, to a container's.
package proctree
