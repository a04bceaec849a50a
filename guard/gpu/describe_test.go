package gpu

import (
	"slices"
	"testing"
)

// gib is here, not with the NVML mocks, because a build without cgo has no
// mocks and still runs these tests.
const gib = 1 << 30

func TestDescribe(t *testing.T) {
	tests := []struct {
		usage Usage
		want  []string
	}{
		{Usage{}, []string{}},
		{Usage{Total: 3 * gib, GPUs: []GPU{
			{Index: 0, Name: "NVIDIA A100-SXM4-40GB", Used: 2 * gib, Procs: []Proc{{PID: 7, Used: 2 * gib}}, MemUsed: 31 * gib, MemTotal: 40 * gib},
			{Index: 1, Name: "Tesla T4", MemUsed: 1 << 20, MemTotal: 15 * gib},
			{Index: 2, Name: "Tesla T4", Used: gib, Procs: []Proc{{PID: 7, Used: gib}, {PID: 8, UsedUnknown: true}}, MemUsed: 3 * gib, MemTotal: 15 * gib},
		}}, []string{
			"GPU 0 (NVIDIA A100-SXM4-40GB): the kernel holds 2 GiB; 31 GiB of 40 GiB in use",
			"GPU 1 (Tesla T4): the kernel holds 0 B; 1 MiB of 15 GiB in use",
			"GPU 2 (Tesla T4): the kernel holds 1 GiB and an amount the driver does not report; 3 GiB of 15 GiB in use",
		}},
		{Usage{PIDsHidden: true, GPUs: []GPU{{Index: 0, Name: "Tesla T4", MemUsed: 12 * gib, MemTotal: 15 * gib}}}, []string{
			"GPU 0 (Tesla T4): " + HiddenReason + "; 12 GiB of 15 GiB in use",
		}},
	}
	for _, tt := range tests {
		if got := tt.usage.Describe(); !slices.Equal(got, tt.want) {
			t.Errorf("Describe() =\n%q\nwant\n%q", got, tt.want)
		}
	}
}
