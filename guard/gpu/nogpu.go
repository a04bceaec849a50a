package gpu

// NoGPU is the Meter where there is nothing to measure: no NVIDIA driver, no
// libnvidia-ml, no device. It reports no GPUs and never touches NVML.
type NoGPU struct {
	Reason string // why, for a one-line notice: "no NVIDIA driver library (libnvidia-ml.so.1)"
}

func (NoGPU) Usage([]int) (Usage, error) { return Usage{}, nil }

func (NoGPU) Close() error { return nil }

func (NoGPU) Driver() Driver { return Driver{} }
