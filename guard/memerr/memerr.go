// Package memerr recognises, in what a cell raised, that an allocation of
// the kernel's own memory failed: Python's MemoryError (NumPy's says how
// much it asked for), C++'s std::bad_alloc (TensorFlow's CPU kernels),
// PyTorch's CPU allocator, R's "cannot allocate vector". Under the guard's
// allocation ceiling that is how a cell that outgrew its budget ends, and
// the guard explains it in the cell.
package memerr

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Error is a cell's report that an allocation failed.
type Error struct {
	// Asked is what the failed allocation asked for, in bytes, where the
	// message says; 0 where it does not.
	Asked uint64
	// Work is what the cell was doing, from its traceback, for the advice.
	Work Work
	// Near: the guard's own hook raised it, before the cell reached its
	// line (ceiling.NearSignal): nothing was refused yet.
	Near bool
	// Pool: TensorFlow's own CPU allocator refused it at the limit it was
	// given (TF_CPU_BFC_MEM_LIMIT_IN_MB): ResourceExhaustedError.
	Pool bool
	// Worker: it was raised in a worker process and passed to the cell
	// (multiprocessing, concurrent.futures, joblib): the worker may have
	// come and gone between two of the guard's samples.
	Worker bool
}

// Work is what a cell that ran out of memory was doing.
type Work int

const (
	Other   Work = iota
	Fit          // training a model (Keras, PyTorch): its batch's activations
	Array        // one array too big (NumPy)
	Frame        // a pandas DataFrame
	Vector       // an R vector
	Shell        // bash itself (a variable, an array): bash_kernel restarts it
	Command      // a program a shell cell ran
)

// NearText is how the guard's Python hook words the MemoryError it raises
// (supervisor/pyhook/sitecustomize.py).
const NearText = "jupyter-guard: this cell was about to reach the kernel's memory ceiling"

var (
	// NumPy: "Unable to allocate 2.00 GiB for an array with shape ..."
	numpy = regexp.MustCompile(`Unable to allocate (\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB|PiB|EiB) for an array`)
	// PyTorch's CPU allocator: "you tried to allocate 123456 bytes"
	torch = regexp.MustCompile(`tried to allocate (\d+) bytes`)
	// TensorFlow: "OOM when allocating tensor with shape[768,32,32,16] and type float"
	tfTensor = regexp.MustCompile(`OOM when allocating tensor with shape\[([0-9,]+)\] and type (\w+)`)
	// R: "cannot allocate vector of size 7.5 Gb" (powers of 1024)
	rVector = regexp.MustCompile(`cannot allocate vector of size (\d+(?:\.\d+)?) (Kb|Mb|Gb|Tb)`)
)

var units = map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
	"EiB": 1 << 60, "Kb": 1 << 10, "Mb": 1 << 20, "Gb": 1 << 30, "Tb": 1 << 40}

// Find looks for a failed allocation in an error a cell raised: its
// ename, evalue and traceback (which may hold the message where the ename
// is a kernel's own, such as IRkernel's "ERROR"). It is a handful of
// substring searches, for error outputs only.
func Find(ename, evalue string, traceback []string) (Error, bool) {
	text := ename + ": " + evalue
	for _, line := range traceback {
		if len(text) > 64<<10 {
			break
		}
		text += "\n" + line
	}
	// xeus-python names the class as Python prints it: "<class 'MemoryError'>";
	// NumPy's own is a MemoryError too.
	class := strings.TrimSuffix(strings.TrimPrefix(ename, "<class '"), "'>")
	class = class[strings.LastIndexByte(class, '.')+1:]
	var e Error
	switch {
	case class == "MemoryError", class == "_ArrayMemoryError", strings.Contains(evalue, "std::bad_alloc"):
		e.Near = strings.Contains(evalue, NearText)
	case strings.Contains(text, "DefaultCPUAllocator"), strings.Contains(text, "cannot allocate vector of size"),
		strings.Contains(text, "OOM when allocating tensor") && strings.Contains(text, "CPU"):
	default:
		return Error{}, false
	}
	// The name TensorFlow gives its CPU allocator when
	// TF_CPU_ALLOCATOR_USE_BFC holds it to a limit.
	e.Pool = strings.Contains(text, "by allocator bfc_cpu_allocator_for_gpu")
	e.Asked = asked(text)
	e.Work = work(text)
	e.Worker = slices.ContainsFunc(workerSigns, func(s string) bool { return strings.Contains(text, s) })
	return e, true
}

// workerSigns are what a traceback passed on from a worker process shows:
// multiprocessing's and concurrent.futures' remote traceback, joblib's.
var workerSigns = []string{"RemoteTraceback", "multiprocessing/pool.py", "concurrent/futures/process.py", "joblib"}

// bash: "bash: xrealloc: cannot allocate 979673088 bytes", after which
// bash_kernel restarts bash.
var bashAlloc = regexp.MustCompile(`\bx(?:m|re)alloc: cannot allocate (\d+) bytes`)

// FindStream looks for a failed allocation in what a cell printed, where
// it is not raised to the kernel: bash running out itself. (A program a
// shell cell runs reports its own; what it printed does not tell the
// ceiling's refusal from another failure, so it gets no note.)
func FindStream(text string) (Error, bool) {
	if m := bashAlloc.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		return Error{Asked: n, Work: Shell}, true
	}
	return Error{}, false
}

// asked is the size the message gives, 0 if none.
func asked(text string) uint64 {
	if m := numpy.FindStringSubmatch(text); m != nil {
		return size(m[1], m[2])
	}
	if m := rVector.FindStringSubmatch(text); m != nil {
		return size(m[1], m[2])
	}
	if m := tfTensor.FindStringSubmatch(text); m != nil {
		return tensorBytes(m[1], m[2])
	}
	if m := torch.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		return n
	}
	return 0
}

// dtypeBytes are the sizes of TensorFlow's dtypes by the name its OOM
// message gives them.
var dtypeBytes = map[string]uint64{"float": 4, "double": 8, "half": 2, "bfloat16": 2, "int8": 1, "uint8": 1,
	"int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1, "complex64": 8, "complex128": 16}

// tensorBytes is the size of a tensor of shape dims ("768,32,32,16") and
// dtype, 0 if either is not understood.
func tensorBytes(dims, dtype string) uint64 {
	n := dtypeBytes[dtype]
	for d := range strings.SplitSeq(dims, ",") {
		k, err := strconv.ParseUint(d, 10, 64)
		if err != nil {
			return 0
		}
		n *= k
	}
	return n
}

func size(number, unit string) uint64 {
	f, err := strconv.ParseFloat(number, 64)
	if err != nil {
		return 0
	}
	return uint64(f * units[unit])
}

// work tells from the message and the frames what the cell was doing.
func work(text string) Work {
	lower := strings.ToLower(text)
	switch {
	case strings.Contains(lower, "keras") || strings.Contains(lower, "tensorflow") || strings.Contains(lower, "torch") ||
		strings.Contains(lower, ".fit(") || strings.Contains(lower, "when allocating tensor"):
		return Fit
	case strings.Contains(lower, "pandas"):
		return Frame
	case strings.Contains(text, "cannot allocate vector"):
		return Vector
	case strings.Contains(text, "for an array with shape") || strings.Contains(lower, "numpy"):
		return Array
	}
	return Other
}
