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

// Fix says what fixes a failure of this kind, for the diagnosis of a death
// and the note under a cell.
func (s Setup) Fix() string {
	for _, k := range setups {
		if k.kind == s.Kind {
			return k.fix
		}
	}
	return ""
}

// setups are in the order FindSetup prefers them: a mismatch is the cause
// of the initialisation failures printed after it.
var setups = []struct {
	kind    string
	fix     string
	phrases []string
}{
	{DriverMismatch, "The framework or its cuDNN was built for another CUDA than this machine has. " +
		"Install the framework's build for the driver's CUDA (or older), or the cuDNN it was built " +
		"with; or have the driver updated. Right after a driver update NVML itself reports a " +
		"mismatch until the machine restarts.", []string{
		"CUDA driver version is insufficient for CUDA runtime version", // CUDA runtime
		"Driver/library version mismatch",                              // NVML after a driver update
		"NVIDIA driver on your system is too old",                      // PyTorch
		"Loaded runtime CuDNN library",                                 // TensorFlow, XLA
	}},
	{CuDNNInit, "cuDNN most often fails to start for want of GPU memory: another process " +
		"holds it (guardctl status shows what each guarded kernel holds; TensorFlow takes a " +
		"whole GPU unless TF_FORCE_GPU_ALLOW_GROWTH=true). Otherwise the installed cuDNN does " +
		"not match the framework's build.", []string{
		"CUDNN_STATUS_NOT_INITIALIZED", "Could not create cudnn handle", "cuDNN failed to initialize",
		"Could not load library libcudnn", "DNN library initialization failed",
	}},
	{CUDAInit, "CUDA could not reach a GPU: check that nvidia-smi works, that " +
		"CUDA_VISIBLE_DEVICES names a GPU, and that a container was started with the GPUs " +
		"(docker run --gpus all).", []string{"CUDA_ERROR_NOT_INITIALIZED", "CUDA_ERROR_NO_DEVICE", "failed call to cuInit", "CUDA driver initialization failed"}},
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
