//go:build cgo

package gpu

import (
	"bufio"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

const (
	a100    = "Mock NVIDIA A100-SXM4-40GB"
	a100Mem = 40 * gib
)

// fakeGPUs is eight A100s with 1 GiB in use each and no processes, until a
// test says otherwise.
func fakeGPUs() *dgxa100.Server {
	s := dgxa100.New()
	for i := range s.Devices {
		d := gpuOf(s, i)
		d.MemoryInfo = nvml.Memory{Total: a100Mem, Used: gib, Free: a100Mem - gib}
		d.GetComputeRunningProcessesFunc = running()
		d.GetGraphicsRunningProcessesFunc = running()
	}
	return s
}

func gpuOf(s *dgxa100.Server, i int) *dgxa100.Device { return s.Devices[i].(*dgxa100.Device) }

func running(procs ...nvml.ProcessInfo) func() ([]nvml.ProcessInfo, nvml.Return) {
	return func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
}

func failing(ret nvml.Return) func() ([]nvml.ProcessInfo, nvml.Return) {
	return func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ret }
}

func onGPU(pid int, used uint64) nvml.ProcessInfo {
	return nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: used}
}

// idle is how every GPU a test leaves alone reads.
func idle(i int) GPU { return GPU{Index: i, Name: a100, MemUsed: gib, MemTotal: a100Mem} }

// startTree starts sh with a sleeping child, real processes for the fake
// GPUs to report, and returns their pids once proctree sees both.
func startTree(t *testing.T) (sh, sleep int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	// sh prints the child's pid after forking it.
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("sh printed no pid: %v", err)
	}
	sleep, err = strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	sh = cmd.Process.Pid
	if tree, err := proctree.Descendants(sh); err != nil || !slices.Equal(tree, []int{sh, sleep}) {
		t.Fatalf("Descendants(sh) = %v, %v; want [%d %d]", tree, err, sh, sleep)
	}
	return sh, sleep
}

func TestUsageOfATree(t *testing.T) {
	sh, sleep := startTree(t)
	stranger := os.Getpid() // a real process outside the tree

	s := fakeGPUs()
	gpuOf(s, 0).GetComputeRunningProcessesFunc = running(onGPU(sh, 2*gib), onGPU(stranger, 5*gib))
	// On GPU 3 sleep has both kinds of context, and shows in both lists.
	gpuOf(s, 3).GetComputeRunningProcessesFunc = running(onGPU(sleep, gib))
	gpuOf(s, 3).GetGraphicsRunningProcessesFunc = running(onGPU(sleep, gib), onGPU(sh, gib/2))
	gpuOf(s, 5).GetComputeRunningProcessesFunc = running(onGPU(sleep, notAvailable))

	meter := open(s, samePIDs)
	defer meter.Close()
	got, err := meter.Usage([]int{sh, sleep})
	if err != nil {
		t.Fatal(err)
	}

	want := Usage{Total: 3.5 * gib}
	for i := range 8 {
		want.GPUs = append(want.GPUs, idle(i))
	}
	want.GPUs[0].Used, want.GPUs[0].Procs = 2*gib, []Proc{{PID: sh, Used: 2 * gib}}
	want.GPUs[0].Others = []Proc{{PID: stranger, Used: 5 * gib}}
	want.GPUs[3].Used, want.GPUs[3].Procs = 1.5*gib, []Proc{{PID: sh, Used: gib / 2}, {PID: sleep, Used: gib}}
	want.GPUs[5].Procs = []Proc{{PID: sleep, UsedUnknown: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Usage =\n%+v\nwant\n%+v", got, want)
	}
}

func TestUsageWhenHostPIDsAreHidden(t *testing.T) {
	// The process lists are left unset, so asking for them would panic:
	// host pids cannot be matched, so the meter must not ask.
	s := dgxa100.New()
	for i := range s.Devices {
		gpuOf(s, i).MemoryInfo = nvml.Memory{Total: a100Mem, Used: gib, Free: a100Mem - gib}
	}
	meter := open(s, nil)
	defer meter.Close()
	got, err := meter.Usage([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{PIDsHidden: true}
	for i := range 8 {
		want.GPUs = append(want.GPUs, idle(i))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Usage =\n%+v\nwant\n%+v", got, want)
	}
}

func TestUsageGoesOnPastAFailingGPU(t *testing.T) {
	pid := os.Getpid()
	s := fakeGPUs()
	gpuOf(s, 1).GetComputeRunningProcessesFunc = running(onGPU(pid, gib))
	gpuOf(s, 2).GetComputeRunningProcessesFunc = failing(nvml.ERROR_GPU_IS_LOST)
	gpuOf(s, 4).GetComputeRunningProcessesFunc = running(onGPU(pid, 2*gib))
	gpuOf(s, 4).GetGraphicsRunningProcessesFunc = failing(nvml.ERROR_NOT_SUPPORTED) // not an error

	meter := open(s, samePIDs)
	defer meter.Close()
	got, err := meter.Usage([]int{pid})
	if err == nil || !strings.Contains(err.Error(), "GPU 2 compute processes") {
		t.Errorf("Usage error = %v, want one naming GPU 2", err)
	}
	var indexes []int
	for _, g := range got.GPUs {
		indexes = append(indexes, g.Index)
	}
	if want := []int{0, 1, 3, 4, 5, 6, 7}; !slices.Equal(indexes, want) {
		t.Errorf("GPUs read: %v, want %v", indexes, want)
	}
	if got.Total != 3*gib {
		t.Errorf("Total = %d, want 3 GiB from GPUs 1 and 4", got.Total)
	}
}

func TestOpenWhenInitFails(t *testing.T) {
	if hinted() {
		t.Skip("this machine has an NVIDIA device node")
	}
	tests := []struct {
		ret     nvml.Return
		visible string // NVIDIA_VISIBLE_DEVICES
		want    NoGPU
	}{
		// No library and nothing that says a GPU was given: no news.
		{nvml.ERROR_LIBRARY_NOT_FOUND, "", NoGPU{Reason: "no NVIDIA driver library (libnvidia-ml.so.1)"}},
		{nvml.ERROR_LIBRARY_NOT_FOUND, "void", NoGPU{Reason: "no NVIDIA driver library (libnvidia-ml.so.1)"}},
		// A container given a GPU without the library: worth a line.
		{nvml.ERROR_LIBRARY_NOT_FOUND, "all", NoGPU{Reason: "no NVIDIA driver library (libnvidia-ml.so.1)", Expected: true}},
		{nvml.ERROR_DRIVER_NOT_LOADED, "", NoGPU{Reason: "the NVIDIA driver is not loaded", Expected: true}},
		{nvml.ERROR_NO_PERMISSION, "", NoGPU{Reason: "NVML did not start: ERROR_NO_PERMISSION", Expected: true}},
	}
	for _, tt := range tests {
		t.Setenv("NVIDIA_VISIBLE_DEVICES", tt.visible)
		// Only Init is set: any other call, Shutdown included, panics.
		lib := &mock.Interface{InitFunc: func() nvml.Return { return tt.ret }}
		meter := open(lib, samePIDs)
		if meter != tt.want {
			t.Errorf("open with Init failing with %v, NVIDIA_VISIBLE_DEVICES=%q: %#v, want %#v", tt.ret, tt.visible, meter, tt.want)
		}
		meter.Usage([]int{1})
		meter.Close()
	}
}

// countShutdowns counts the server's calls to Shutdown.
func countShutdowns(s *dgxa100.Server) *int {
	n := new(int)
	s.ShutdownFunc = func() nvml.Return { *n++; return nvml.SUCCESS }
	return n
}

func TestOpenWithoutDevices(t *testing.T) {
	tests := []struct {
		count func() (int, nvml.Return)
		want  string
	}{
		{func() (int, nvml.Return) { return 0, nvml.SUCCESS }, "NVML found no GPU"},
		{func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }, "count GPUs: ERROR_UNKNOWN"},
	}
	for _, tt := range tests {
		s := dgxa100.New()
		s.DeviceGetCountFunc = tt.count
		shutdowns := countShutdowns(s)
		meter := open(s, samePIDs)
		if meter != (NoGPU{Reason: tt.want, Expected: true}) {
			t.Errorf("open = %#v, want NoGPU{%q, Expected}", meter, tt.want)
		}
		if *shutdowns != 1 {
			t.Errorf("NVML shut down %d times after a successful Init, want once", *shutdowns)
		}
	}
}

func TestCloseShutsDownOnce(t *testing.T) {
	s := fakeGPUs()
	shutdowns := countShutdowns(s)
	meter := open(s, samePIDs)
	for range 2 {
		if err := meter.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if *shutdowns != 1 {
		t.Errorf("NVML shut down %d times, want once", *shutdowns)
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		seen, p, want uint64
	}{
		{gib, 2 * gib, 2 * gib},
		{2 * gib, gib, 2 * gib},
		{notAvailable, gib, gib},
		{gib, notAvailable, gib},
		{notAvailable, notAvailable, notAvailable},
	}
	for _, tt := range tests {
		if got := merge(Proc{PID: 7, Used: tt.seen}, Proc{PID: 7, Used: tt.p}); got != (Proc{PID: 7, Used: tt.want}) {
			t.Errorf("merge(%d, %d) = %+v, want %d", tt.seen, tt.p, got, tt.want)
		}
	}
}

func TestUsageInAContainer(t *testing.T) {
	// The driver names host pids; the container's view maps its own
	// (host 4100 and 4101 are the tree's 7 and 8), and no other: 5200 is
	// another container's kernel, 5300 a host process.
	view := func(host int) (int, bool, error) {
		pid, ok := map[int]int{4100: 7, 4101: 8}[host]
		return pid, ok, nil
	}
	s := fakeGPUs()
	gpuOf(s, 0).GetComputeRunningProcessesFunc = running(onGPU(5200, 30*gib), onGPU(4100, 2*gib), onGPU(5300, gib))
	gpuOf(s, 2).GetComputeRunningProcessesFunc = running(onGPU(4101, 3*gib))
	gpuOf(s, 6).GetComputeRunningProcessesFunc = running(onGPU(5200, 4*gib))

	meter := open(s, view)
	defer meter.Close()
	got, err := meter.Usage([]int{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Total: 5 * gib}
	for i := range 8 {
		want.GPUs = append(want.GPUs, idle(i))
	}
	want.GPUs[0].Used, want.GPUs[0].Procs = 2*gib, []Proc{{PID: 4100, Used: 2 * gib}}
	want.GPUs[0].Others = []Proc{{PID: 5200, Used: 30 * gib}, {PID: 5300, Used: gib}}
	want.GPUs[2].Used, want.GPUs[2].Procs = 3*gib, []Proc{{PID: 4101, Used: 3 * gib}}
	want.GPUs[6].Others = []Proc{{PID: 5200, Used: 4 * gib}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Usage =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDriver(t *testing.T) {
	s := fakeGPUs()
	s.DriverVersion, s.CudaDriverVersion = "535.129.03", 12020
	meter := open(s, samePIDs)
	defer meter.Close()
	if got := meter.Driver().String(); got != "NVIDIA driver 535.129.03 (CUDA 12.2)" {
		t.Errorf("Driver() = %q", got)
	}
	s = fakeGPUs()
	s.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	s.DriverVersion = "470.86"
	meter = open(s, samePIDs)
	defer meter.Close()
	if got := meter.Driver().String(); got != "NVIDIA driver 470.86" {
		t.Errorf("Driver() without CUDA's = %q", got)
	}
}
