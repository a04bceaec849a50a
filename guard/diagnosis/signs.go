package diagnosis

import (
	"regexp"
	"slices"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/gpuerr"
)

// SignKind names a kind of last words found in the kernel's output.
type SignKind string

const (
	SignCUDA         SignKind = "cuda"
	SignCppTerminate SignKind = "c++-terminate"
	SignGlibc        SignKind = "glibc"
	SignPythonFatal  SignKind = "python-fatal"
	SignV8OOM        SignKind = "v8-out-of-memory" // V8 (Deno, Node) could not grow its heap
	// TensorFlow's CPU allocator refused a tensor at the limit jupyter-guard
	// held it to (Evidence.TensorPool).
	SignTensorPool SignKind = "tensorflow-pool"
)

// OutputSign is a reason for the death that the kernel printed itself.
type OutputSign struct {
	Kind SignKind `json:"kind"`
	// Message is the reason in one line, e.g. "CUDA error: an illegal
	// memory access was encountered" or "free(): invalid pointer".
	Message string `json:"message"`
	// Lines are the output lines it was read from, to quote as evidence.
	Lines []string `json:"lines"`
}

var (
	cudaRe = regexp.MustCompile(`CUDA error|device-side assert triggered|an illegal memory access was encountered|CUBLAS_STATUS_|CUDNN_STATUS_|cudaError|\.cu:\d+: .*Assertion .* failed`)
	// glibc's malloc_printerr and fortify messages, printed just before it
	// calls abort().
	glibcRe       = regexp.MustCompile(`^(?:(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_malloc|_int_free|tcache_thread_shutdown)\(\): .+|double free or corruption.*|corrupted (?:size vs\. prev_size|double-linked list).*|\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*.*)$`)
	terminateRe   = regexp.MustCompile(`^terminate called (?:after throwing an instance of '(.*)'|without an active exception|recursively)`)
	whatRe        = regexp.MustCompile(`^\s*what\(\):\s*(.*)$`)
	pythonFatalRe = regexp.MustCompile(`^Fatal Python error: (.*)$`)
	// V8 before it ends the process: "# Fatal process out of memory: …"
	// (Deno), "FATAL ERROR: … JavaScript heap out of memory" (Node).
	v8OOMRe = regexp.MustCompile(`Fatal (?:process|JavaScript) out of memory|JavaScript heap out of memory`)
	// TensorFlow's op that failed: "… OP_REQUIRES failed at mkl_util.h:848 :
	// RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[768,32,32,16]
	// and type float on /job:localhost/… by allocator bfc_cpu_allocator_for_gpu"
	tensorPoolRe = regexp.MustCompile(`OOM when allocating tensor .* by allocator bfc_cpu_allocator_for_gpu`)
)

// findSigns reads the kernel's last output lines for the reasons native
// code and the interpreter print before they abort.
func findSigns(lines []string) []OutputSign {
	var signs []OutputSign
	if s, ok := findCUDA(lines); ok {
		signs = append(signs, s)
	}
	if s, ok := findTerminate(lines); ok {
		signs = append(signs, s)
	}
	if i := lastMatch(lines, glibcRe); i >= 0 {
		signs = append(signs, OutputSign{Kind: SignGlibc, Message: lines[i], Lines: []string{lines[i]}})
	}
	if s, ok := findPythonFatal(lines); ok {
		signs = append(signs, s)
	}
	if i := lastMatch(lines, tensorPoolRe); i >= 0 {
		msg := lines[i][strings.Index(lines[i], "OOM when allocating"):]
		signs = append(signs, OutputSign{Kind: SignTensorPool, Message: msg, Lines: []string{lines[i]}})
	}
	if i := lastMatch(lines, v8OOMRe); i >= 0 {
		msg := strings.TrimSpace(strings.TrimLeft(lines[i], "#"))
		signs = append(signs, OutputSign{Kind: SignV8OOM, Message: msg, Lines: []string{lines[i]}})
	}
	return signs
}

// findCUDA names the CUDA error: the "CUDA error: …" line if there is
// one, else the first match (later lines are usually its echoes). It
// quotes the first match, that line and the last match: a device-side
// assert prints one line per GPU thread.
func findCUDA(lines []string) (OutputSign, bool) {
	first, named, last := -1, -1, -1
	for i, l := range lines {
		if _, setup := gpuerr.FindSetup(lines[i : i+1]); !setup && !cudaRe.MatchString(l) {
			continue
		}
		if first < 0 {
			first = i
		}
		if named < 0 && strings.Contains(l, cudaErrorPrefix) {
			named = i
		}
		last = i
	}
	if first < 0 {
		return OutputSign{}, false
	}
	s := OutputSign{Kind: SignCUDA, Message: strings.TrimSpace(lines[first])}
	if named >= 0 {
		l := lines[named]
		s.Message = strings.TrimSpace(l[strings.Index(l, cudaErrorPrefix):])
	}
	for _, i := range []int{first, named, last} {
		if i >= 0 && !slices.Contains(s.Lines, lines[i]) {
			s.Lines = append(s.Lines, lines[i])
		}
	}
	return s, true
}

const cudaErrorPrefix = "CUDA error: "

// findTerminate reads libstdc++'s report of an uncaught C++ exception:
// its type, then its what() on the next line. Message is "type: what".
func findTerminate(lines []string) (OutputSign, bool) {
	i := lastMatch(lines, terminateRe)
	if i < 0 {
		return OutputSign{}, false
	}
	s := OutputSign{Kind: SignCppTerminate, Message: lines[i], Lines: []string{lines[i]}}
	if typ := terminateRe.FindStringSubmatch(lines[i])[1]; typ != "" {
		s.Message = typ
	}
	if i+1 < len(lines) {
		if m := whatRe.FindStringSubmatch(lines[i+1]); m != nil {
			s.Lines = append(s.Lines, lines[i+1])
			s.Message += ": " + m[1]
		}
	}
	return s, true
}

// faulthandlerReports are the headers faulthandler prints for a fatal
// signal. They report the signal, not an interpreter error.
var faulthandlerReports = []string{
	"Segmentation fault", "Aborted", "Bus error", "Floating-point exception",
	"Floating point exception", "Illegal instruction",
}

// findPythonFatal finds the last Py_FatalError report, which is followed
// by abort(); faulthandler's signal reports share its prefix and are not one.
func findPythonFatal(lines []string) (OutputSign, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		m := pythonFatalRe.FindStringSubmatch(lines[i])
		if m != nil && !slices.Contains(faulthandlerReports, m[1]) {
			return OutputSign{Kind: SignPythonFatal, Message: m[1], Lines: []string{lines[i]}}, true
		}
	}
	return OutputSign{}, false
}

func lastMatch(lines []string, re *regexp.Regexp) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if re.MatchString(lines[i]) {
			return i
		}
	}
	return -1
}
