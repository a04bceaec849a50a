// Package gpu measures how much GPU memory a process tree holds, through
// NVIDIA's NVML. Without a GPU it hands out a meter that reports none, and it
// then makes no NVML call at all: after a failed nvmlInit any call, even
// nvmlShutdown, can kill the process ("symbol lookup error", exit 127).
//
// NVML calls are far dearer than reading /proc: sample the GPU less often
// than RSS.
package gpu
