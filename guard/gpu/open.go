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
// Call Open once and Close the Meter when done.
func Open() Meter {
	// If we cannot tell, attribute nothing rather than risk blaming other
	// people's GPU memory on the kernel; Usage says so with PIDsHidden.
	sees, err := proctree.SeesHostPIDs()
	return open(nvml.New(), sees && err == nil)
}

// open is Open on any NVML, real or mocked.
func open(lib nvml.Interface, seesHostPIDs bool) Meter {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// Touch nothing else, not even Shutdown: see the package comment.
		return NoGPU{Reason: initFailure(ret)}
	}
	devices, err := listDevices(lib)
	if err == nil && len(devices) == 0 {
		err = errors.New("NVML found no GPU")
	}
	if err != nil {
		lib.Shutdown()
		return NoGPU{Reason: err.Error()}
	}
	return &nvmlMeter{lib: lib, devices: devices, seesHostPIDs: seesHostPIDs}
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
