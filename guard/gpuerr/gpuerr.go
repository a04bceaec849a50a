// Package gpuerr recognises the GPU out-of-memory errors of the frameworks
// notebooks use (PyTorch, TensorFlow, JAX, CuPy) in what a cell printed or
// raised. Such an error rarely kills the kernel: the framework raises an
// exception and the user is left to guess who holds the GPU's memory.
package gpuerr

import (
	"regexp"
	"strconv"
	"strings"
)

// OOM is a framework's report that a GPU ran out of memory.
type OOM struct {
	Framework string // "PyTorch", "TensorFlow", "JAX", "CuPy"
	// Device is the GPU the framework names, as CUDA numbers them (which
	// CUDA_VISIBLE_DEVICES may shift from NVML's numbers); -1 if none.
	Device int
	// Preallocates says the framework reserves most of a GPU for itself
	// by default, which is what leaves the next notebook without any.
	Preallocates bool
}

// framework is one framework's words for running out of GPU memory.
type framework struct {
	name         string
	phrases      []string       // any of them, as the framework prints it
	device       *regexp.Regexp // its first group is the GPU's number
	preallocates bool
}

// frameworks are tried in order; the phrases are specific enough that a
// text matches one framework only.
var frameworks = []framework{
	{name: "PyTorch", phrases: []string{"CUDA out of memory"}, device: regexp.MustCompile(`\(?GPU (\d+)[;) ]`)},
	{name: "TensorFlow", phrases: []string{"OOM when allocating tensor"}, device: regexp.MustCompile(`device:GPU:(\d+)`),
		preallocates: true},
	{name: "JAX", phrases: []string{"RESOURCE_EXHAUSTED: Out of memory", "RESOURCE_EXHAUSTED: Failed to allocate request"},
		device: regexp.MustCompile(`device ordinal (\d+)`), preallocates: true},
	{name: "CuPy", phrases: []string{"Out of memory allocating", "out of memory to allocate"}},
}

// Find looks for a GPU out-of-memory report in text: an error output's
// "ename: evalue", or a stream's text. It is a handful of substring
// searches, cheap enough for every error and every small stream output.
func Find(text string) (OOM, bool) {
	for _, f := range frameworks {
		for _, p := range f.phrases {
			if strings.Contains(text, p) {
				return OOM{Framework: f.name, Device: deviceIn(text, f.device), Preallocates: f.preallocates}, true
			}
		}
	}
	return OOM{}, false
}

func deviceIn(text string, re *regexp.Regexp) int {
	if re == nil {
		return -1
	}
	m := re.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}
