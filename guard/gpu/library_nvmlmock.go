//go:build cgo && nvmlmock

package gpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// MockEnv names the JSON file (MockState) that a guardctl built with the
// nvmlmock tag reads its GPUs from, for the integration tests on machines
// without a GPU. The production build has no such code.
const MockEnv = "JUPYTER_GUARD_NVMLMOCK"

// MockState is what the mocked GPUs hold; the file is read at every call,
// so a test can change it while kernels run. GPUs it leaves out are idle.
type MockState struct {
	GPUs []MockGPU `json:"gpus"`
}

// MockGPU is one of the mock's eight A100s, 80 GB ones unless it says.
type MockGPU struct {
	Index int    `json:"index"`
	Total uint64 `json:"total_bytes,omitempty"`
	Procs []struct {
		PID  uint32 `json:"pid"`
		Used uint64 `json:"used_bytes"`
	} `json:"processes"`
}

// mockName is the mock's GPUs' name: the A100s whose memory is 80 GB.
const mockName = "Mock NVIDIA A100-SXM4-80GB"

// library is a dgxa100 mock whose memory and processes come from the file
// that MockEnv names.
func library() nvml.Interface {
	path := os.Getenv(MockEnv)
	s := dgxa100.New()
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		dev.Name = mockName
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			g, ret := mockGPU(path, i)
			var used uint64
			for _, p := range g.Procs {
				used += p.Used
			}
			return nvml.Memory{Total: g.Total, Used: used, Free: g.Total - min(used, g.Total)}, ret
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			g, ret := mockGPU(path, i)
			var infos []nvml.ProcessInfo
			for _, p := range g.Procs {
				infos = append(infos, nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: p.Used})
			}
			return infos, ret
		}
		dev.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
	}
	return s
}

// mockGPU reads GPU i from the file; a file not written yet leaves every
// GPU idle, one that does not parse fails the call, as a lost GPU would.
func mockGPU(path string, i int) (MockGPU, nvml.Return) {
	idle := MockGPU{Index: i, Total: 80 << 30}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return idle, nvml.SUCCESS
	}
	var st MockState
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nvmlmock: %s: %v\n", path, err)
		return idle, nvml.ERROR_UNKNOWN
	}
	for _, g := range st.GPUs {
		if g.Index == i {
			if g.Total == 0 {
				g.Total = idle.Total
			}
			return g, nvml.SUCCESS
		}
	}
	return idle, nvml.SUCCESS
}
