package supervisor

import (
	"reflect"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/gpu"
	"github.com/jupyter-guard/jupyter-guard/guard/gpuerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
)

const gib = 1 << 30

// a100 is GPU i with the kernel's and the others' processes on it.
func a100(i int, kernel []gpu.Proc, others ...gpu.Proc) gpu.GPU {
	g := gpu.GPU{Index: i, Name: "A100", Procs: kernel, Others: others, MemTotal: 80 * gib}
	for _, p := range append(kernel, others...) {
		g.MemUsed += p.Used
	}
	for _, p := range kernel {
		g.Used += p.Used
	}
	return g
}

func TestGPUFacts(t *testing.T) {
	// Kernel abcdef0123 runs a notebook and a worker on GPU 1; 900 is
	// nobody we know. This kernel (pid 10) holds 1 GiB of GPU 2.
	other := control.State{KernelID: "abcdef0123", Notebook: "big.ipynb", GPU: []control.GPU{{Index: 1, PIDs: []int{500, 501}}}}
	u := gpu.Usage{Total: gib, GPUs: []gpu.GPU{
		a100(0, nil),
		a100(1, nil, gpu.Proc{PID: 500, Used: 30 * gib}, gpu.Proc{PID: 501, Used: 20 * gib}, gpu.Proc{PID: 900, Used: 60 * gib}),
		a100(2, []gpu.Proc{{PID: 10, Used: gib}}, gpu.Proc{PID: 900, Used: 3 * gib}),
	}}
	gpu1 := notice.GPUHeld{Index: 1, Name: "A100", InUse: 110 * gib, Total: 80 * gib, Others: []notice.Holder{
		{Used: 60 * gib, PID: 900}, {Used: 50 * gib, Kernel: "abcdef01", Notebook: "big.ipynb"}}}
	gpu2 := notice.GPUHeld{Index: 2, Name: "A100", InUse: 4 * gib, Total: 80 * gib, Kernel: gib, Others: []notice.Holder{{Used: 3 * gib, PID: 900}}}
	tests := []struct {
		why  string
		oom  gpuerr.OOM
		want []notice.GPUHeld
	}{
		{"the framework names GPU 1", gpuerr.OOM{Framework: "PyTorch", Device: 1}, []notice.GPUHeld{gpu1}},
		{"no device named: where the kernel holds memory", gpuerr.OOM{Framework: "CuPy", Device: -1}, []notice.GPUHeld{gpu2}},
		{"a device NVML does not have", gpuerr.OOM{Framework: "JAX", Device: 7}, []notice.GPUHeld{gpu2}},
	}
	for _, tt := range tests {
		got := gpuFacts(tt.oom, u, []control.State{other})
		want := notice.GPUFacts{Framework: tt.oom.Framework, GPUs: tt.want}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.why, got, want)
		}
	}
}

func TestGPUFactsWhenPIDsAreHidden(t *testing.T) {
	u := gpu.Usage{PIDsHidden: true, GPUs: []gpu.GPU{{Index: 0, Name: "T4", MemUsed: 14 * gib, MemTotal: 15 * gib}, {Index: 1, Name: "T4", MemTotal: 15 * gib}}}
	got := gpuFacts(gpuerr.OOM{Framework: "TensorFlow", Device: 0, Preallocates: true}, u, nil)
	want := notice.GPUFacts{Framework: "TensorFlow", Preallocates: true, Unknown: gpu.HiddenReason,
		GPUs: []notice.GPUHeld{{Index: 0, Name: "T4", InUse: 14 * gib, Total: 15 * gib}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
