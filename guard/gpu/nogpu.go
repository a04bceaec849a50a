package gpu

import "os"

// NoGPU is the Meter where there is nothing to measure: no NVIDIA driver, no
// libnvidia-ml, no device. It reports no GPUs and never touches NVML.
type NoGPU struct {
	Reason string // why, for a one-line notice: "no NVIDIA driver library (libnvidia-ml.so.1)"
	// Expected says a GPU could be expected here all the same: the
	// driver's library is there, or a device node or NVIDIA_VISIBLE_DEVICES
	// says a GPU was given. Elsewhere, that none is measured is no news.
	Expected bool
}

func (NoGPU) Usage([]int) (Usage, error) { return Usage{}, nil }

func (NoGPU) Close() error { return nil }

func (NoGPU) Driver() Driver { return Driver{} }

// hinted tells whether the machine says it has an NVIDIA GPU without its
// library: a device node, or a container runtime that was asked for one.
func hinted() bool {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		return true
	}
	switch v := os.Getenv("NVIDIA_VISIBLE_DEVICES"); v {
	case "", "void", "none":
		return false
	}
	return true
}
