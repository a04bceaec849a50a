//go:build cgo

package gpu

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Open starts NVML and finds the GPUs. It never fails: without a usable GPU
// it returns a NoGPU saying why, which is the normal case on most machines.
// hostProc is where the host's /proc is mounted in a container with its own
// pid namespace ("" if it is not), to match the driver's host pids to the
// kernel's. Call Open once and Close the Meter when done.
func Open(hostProc string) Meter {
	return open(library(), viewFrom(hostProc))
}

// pidView is the pid under which /proc shows the process the driver names
// hostPID; ok is false if it is none of ours.
type pidView func(hostPID int) (pid int, ok bool, err error)

// samePIDs is the view on the host, or in a container sharing its pids.
func samePIDs(hostPID int) (int, bool, error) { return hostPID, true, nil }

// viewFrom is how the driver's pids become ours: the same where we see the
// host's pids, through hostProc in a container that was given it. Where
// neither works it is nil: attribute nothing rather than risk blaming
// other people's GPU memory on the kernel; Usage says so with PIDsHidden.
func viewFrom(hostProc string) pidView {
	if sees, err := proctree.SeesHostPIDs(); err == nil && sees {
		return samePIDs
	}
	if hostProc == "" {
		return nil
	}
	ns, err := proctree.OwnPIDNamespace()
	if err != nil {
		return nil
	}
	return proctree.NewHostProc(hostProc, ns).Local
}

// open is Open on any NVML, real or mocked.
func open(lib nvml.Interface, view pidView) Meter {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// Touch nothing else, not even Shutdown: see the package comment.
		return NoGPU{Reason: initFailure(ret), Expected: ret != nvml.ERROR_LIBRARY_NOT_FOUND || hinted()}
	}
	devices, err := listDevices(lib)
	if err == nil && len(devices) == 0 {
		err = errors.New("NVML found no GPU")
	}
	if err != nil {
		lib.Shutdown()
		return NoGPU{Reason: err.Error(), Expected: true}
	}
	return &nvmlMeter{lib: lib, devices: devices, view: view, driver: driverOf(lib)}
}

// driverOf reads the driver's versions; a version it will not tell is
// left empty, as the diagnosis can do without.
func driverOf(lib nvml.Interface) Driver {
	var d Driver
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		d.Version = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		d.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10) // 12020 is CUDA 12.2
	}
	return d
}

// initFailure explains a failed nvmlInit. Return.Error is safe here: without
// the library it is plain Go, and with it nvmlErrorString needs no init.
func initFailure(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "no NVIDIA driver library (libnvidia-ml.so.1)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "the NVIDIA driver is not loaded"
	}
	return "NVML did not start: " + ret.Error()
}

// listDevices finds every GPU once, so Usage only asks about memory.
func listDevices(lib nvml.Interface) ([]device, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("count GPUs: %w", ret)
	}
	devices := make([]device, 0, count)
	for i := range count {
		handle, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d: %w", i, ret)
		}
		name, ret := handle.GetName()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d name: %w", i, ret)
		}
		devices = append(devices, device{handle: handle, index: i, name: name})
	}
	return devices, nil
}
