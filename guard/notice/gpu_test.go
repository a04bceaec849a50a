package notice

import "testing"

func TestGPUOutOfMemory(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		why  string
		f    GPUFacts
		want string
	}{
		{"PyTorch beside a process that is no guarded kernel: no TensorFlow advice",
			GPUFacts{Framework: "PyTorch", GPUs: []GPUHeld{{Index: 1, Name: "Tesla T4", InUse: 15 * gib, Total: 15 * gib, Kernel: 5 * gib,
				Others: []Holder{{Used: 10 * gib, PID: 4242}}}}}, `
jupyter-guard: the GPU ran out of memory (PyTorch).
  GPU 1 (Tesla T4): 15 GiB of 15 GiB in use:
    5 GiB: this kernel
    10 GiB: process 4242 (not a guarded kernel)
What to do:
  - Ask the GPU for less at once: a smaller batch size.
`},
		{"JAX in a container that cannot see the host's pids",
			GPUFacts{Framework: "JAX", Preallocates: true, Unknown: "the kernel's share is unknown",
				GPUs: []GPUHeld{{Index: 0, Name: "Tesla T4", InUse: 14 * gib, Total: 15 * gib}}}, `
jupyter-guard: the GPU ran out of memory (JAX).
  GPU 0 (Tesla T4): 14 GiB of 15 GiB in use; the kernel's share is unknown.
What to do:
  - TensorFlow reserves nearly all of a GPU's memory when it first uses it: set TF_FORCE_GPU_ALLOW_GROWTH=true (for JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false) before the import, in each notebook that shares the GPU.
  - Ask the GPU for less at once: a smaller batch size.
`},
		{"a guarded kernel without a notebook",
			GPUFacts{Framework: "CuPy", GPUs: []GPUHeld{{Index: 0, Name: "A100", InUse: 80 * gib, Total: 80 * gib,
				Others: []Holder{{Used: 79 * gib, Kernel: "abcdef01"}}}}}, `
jupyter-guard: the GPU ran out of memory (CuPy).
  GPU 0 (A100): 80 GiB of 80 GiB in use:
    0 B: this kernel
    79 GiB: the guarded kernel abcdef01
What to do:
  - Free it there: in that kernel, delete what holds the GPU (del …; gc.collect()), or restart that kernel (guardctl restart abcdef01).
  - TensorFlow reserves nearly all of a GPU's memory when it first uses it: set TF_FORCE_GPU_ALLOW_GROWTH=true (for JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false) before the import, in each notebook that shares the GPU.
  - Ask the GPU for less at once: a smaller batch size.
`},
	}
	for _, tt := range tests {
		if got := GPUOutOfMemory(tt.f); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.why, got, tt.want)
		}
	}
}

func TestGPUWarning(t *testing.T) {
	const gib = 1 << 30
	got := GPUWarning(GPUHeld{Index: 1, Name: "A100", Kernel: 73 * gib, InUse: 75 * gib, Total: 80 * gib}, "90%")
	want := `
jupyter-guard: GPU memory warning.
  the kernel's processes hold 73 GiB of GPU 1 (A100), 91% of its 80 GiB (the warning line is 90%, JUPYTER_GUARD_GPU_WARN);
  75 GiB of it is in use by all processes.
When it is full, the next allocation fails with an out-of-memory error (the kernel survives it).
To make room, free what this notebook no longer needs on the GPU (del …; gc.collect()), or use a smaller batch.
`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestGPUSetup(t *testing.T) {
	got := GPUSetup("driver/library version mismatch", "NVIDIA driver on your system is too old (found version 11040)",
		"NVIDIA driver 470.86 (CUDA 11.4)", "Install the framework's build for the driver's CUDA.")
	want := `
jupyter-guard: this is a driver/library version mismatch, not an error in the notebook's code.
  the error: NVIDIA driver on your system is too old (found version 11040)
  NVML reports NVIDIA driver 470.86 (CUDA 11.4).
What to do: Install the framework's build for the driver's CUDA.
`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := GPUSetup("CUDA initialisation failure", "CUDA_ERROR_NO_DEVICE", "", "Check nvidia-smi."); got != `
jupyter-guard: this is a CUDA initialisation failure, not an error in the notebook's code.
  the error: CUDA_ERROR_NO_DEVICE
What to do: Check nvidia-smi.
` {
		t.Errorf("without NVML's versions: %s", got)
	}
}
