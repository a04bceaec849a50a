package gpu

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// preallocators are the frameworks that reserve most of a GPU's memory as
// soon as they first use it, by the library each maps and the variable
// that turns the reservation off.
var preallocators = []struct {
	name, library, off string
}{
	{"TensorFlow", "libtensorflow", "TF_FORCE_GPU_ALLOW_GROWTH=true"},
	{"JAX", "/jaxlib/", "XLA_PYTHON_CLIENT_PREALLOCATE=false"},
}

// Preallocator names the framework in process pid (under procRoot, /proc)
// that holds most of a GPU whatever it needs, "" if none: a process that
// has mapped TensorFlow's or JAX's library, unless the environment it was
// started with turns the reservation off. Such a process fills the GPU at
// its first use, so a warning about its share would only be noise. What a
// notebook sets with os.environ is not seen: set it in the kernelspec's env.
func Preallocator(procRoot string, pid int) (string, error) {
	libraries := make([]string, len(preallocators))
	for i, p := range preallocators {
		libraries[i] = p.library
	}
	found, err := proctree.Mapped(procRoot, pid, libraries)
	if found < 0 {
		return "", err
	}
	env, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", fmt.Errorf("environment of pid %d: %w", pid, err)
	}
	p := preallocators[found]
	for v := range bytes.SplitSeq(env, []byte{0}) {
		if string(v) == p.off {
			return "", nil
		}
	}
	return p.name, nil
}

// Over is the first GPU on which the kernel holds line(its total memory) or
// more: a config.Spec's Of turns a share or a size into that line.
func Over(u Usage, line func(total uint64) uint64) (GPU, bool) {
	for _, g := range u.GPUs {
		if g.Used > 0 && g.Used >= line(g.MemTotal) {
			return g, true
		}
	}
	return GPU{}, false
}
