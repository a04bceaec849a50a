package supervisor

import (
	"encoding/json"
	"strings"
)

// kernelInfo is what the supervisor reads from the kernel's
// kernel_info_reply; zero until the kernel answered.
type kernelInfo struct {
	Implementation        string `json:"implementation"`
	ImplementationVersion string `json:"implementation_version"`
	LanguageInfo          struct {
		Name string `json:"name"`
	} `json:"language_info"`
}

func (s *Supervisor) kernelInfo() kernelInfo {
	var info kernelInfo
	_ = json.Unmarshal(s.proxy.KernelInfo(), &info) // none yet: the zero value
	return info
}

// name is "xeus-python 0.19.0", or "" before the kernel answered.
func (k kernelInfo) name() string {
	return strings.TrimSpace(k.Implementation + " " + k.ImplementationVersion)
}

// endOnInterrupt are kernels that exit on an interrupt instead of stopping
// the running cell, as measured with the plain kernel (no proxy):
// xeus-python 0.19.0 exits with code 0 on SIGINT, idle or busy, and does
// not act on an interrupt_request. The guard's notices must not promise
// such a kernel that it survives.
var endOnInterrupt = map[string]bool{"xeus-python": true}

// interruptEnds names the kernel if an interrupt ends it; "" if it survives
// one (or is not known not to).
func (k kernelInfo) interruptEnds() string {
	if endOnInterrupt[k.Implementation] {
		return k.name()
	}
	return ""
}
