package supervisor

import (
	"encoding/json"
	"fmt"
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
// not act on an interrupt_request; Deno 2.9.8 dies of SIGINT, which its
// kernelspec (`deno jupyter --install`) has as its interrupt, though it
// ends the cell on an interrupt_request (interrupt_mode "message"). The
// guard's notices must not promise such a kernel that it survives.
var endOnInterrupt = map[string]bool{"xeus-python": true}
var endOnSIGINT = map[string]bool{"Deno kernel": true}

// interruptEnds names the kernel if an interrupt in mode ("signal" or
// "message") ends it; "" if it survives one (or is not known not to).
func (k kernelInfo) interruptEnds(mode string) string {
	if endOnInterrupt[k.Implementation] || endOnSIGINT[k.Implementation] && mode != "message" {
		return k.name()
	}
	return ""
}

// refusalLoses is what an allocation refused at the guard's ceiling costs
// a kernel that does not raise an error for it, as measured here under a
// 1 GiB cgroup (tests/test_ceiling_kernels.py): Deno's V8 ends the process
// ("Fatal process out of memory", SIGTRAP) when its JavaScript heap
// cannot grow, though a typed array it cannot allocate is a RangeError
// it lives through; bash exits when bash itself (a variable, an array)
// cannot grow, and bash_kernel starts another without its variables,
// while a program it runs fails on its own. ipykernel, xeus-python and
// IRkernel raise their memory error and live on.
var refusalLoses = map[string]string{
	"Deno kernel": "this kernel (%s) ends when its JavaScript heap cannot grow",
	"bash_kernel": "bash_kernel (%s) restarts bash if bash itself cannot grow",
}

// refusalLoses says what a refused allocation costs the kernel, "" if it
// lives on with its variables (or is not known not to).
func (k kernelInfo) refusalLoses() string {
	if text, ok := refusalLoses[k.Implementation]; ok {
		return fmt.Sprintf(text, k.name())
	}
	return ""
}
