package gpuerr

import "strings"

// Kinds of Setup failures.
const (
	DriverMismatch = "driver/library version mismatch"
	CuDNNInit      = "cuDNN initialisation failure"
	CUDAInit       = "CUDA initialisation failure"
)

// Setup is a failure of the GPU software to start, which no change to the
// notebook's code fixes: a framework built for another CUDA or cuDNN than
// the machine has, or a CUDA or cuDNN that would not initialise.
type Setup struct {
	Kind string
	// Line is what the framework says, from the phrase that names the
	// failure to the end of that sentence, without its period: "Loaded
	// runtime CuDNN library: 8.0.4 but source was compiled with: 8.1.0".
	Line string
}

// setups are in the order FindSetup prefers them: a mismatch is the cause
// of the initialisation failures printed after it.
var setups = []struct {
	kind    string
	phrases []string
}{
	{DriverMismatch, []string{
		"CUDA driver version is insufficient for CUDA runtime version", // CUDA runtime
		"Driver/library version mismatch",                              // NVML after a driver update
		"NVIDIA driver on your system is too old",                      // PyTorch
		"Loaded runtime CuDNN library",                                 // TensorFlow, XLA
	}},
	{CuDNNInit, []string{
		"CUDNN_STATUS_NOT_INITIALIZED", "Could not create cudnn handle", "cuDNN failed to initialize",
		"Could not load library libcudnn", "DNN library initialization failed",
	}},
	{CUDAInit, []string{"CUDA_ERROR_NOT_INITIALIZED", "CUDA_ERROR_NO_DEVICE", "failed call to cuInit", "CUDA driver initialization failed"}},
}

// FindSetup finds the line of output that names a setup failure, preferring
// a mismatch wherever it is printed.
func FindSetup(lines []string) (Setup, bool) {
	for _, s := range setups {
		for _, l := range lines {
			for _, p := range s.phrases {
				if i := strings.Index(l, p); i >= 0 {
					return Setup{Kind: s.kind, Line: sentence(l[i:])}, true
				}
			}
		}
	}
	return Setup{}, false
}

// sentence is text up to the end of its first sentence: a period followed
// by a space (versions such as 8.1.0 have none) or the end.
func sentence(text string) string {
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(text), ".")
}
