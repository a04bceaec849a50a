//go:build cgo && !nvmlmock

package gpu

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// library is the NVML the meter reads: the driver's.
func library() nvml.Interface { return nvml.New() }
