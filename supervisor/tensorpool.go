package supervisor

import (
	"fmt"
	"os"
)

// tensorPoolVars are TensorFlow's switches for its CPU allocator: a
// best-fit allocator held to a limit, which fails a step that outgrows it
// with ResourceExhaustedError instead of letting the OOM killer end the
// kernel (TensorFlow's default allocator has no limit).
var tensorPoolVars = []string{"TF_CPU_ALLOCATOR_USE_BFC", "TF_CPU_BFC_MEM_LIMIT_IN_MB"}

// tensorPoolEnv is the environment that holds TensorFlow's CPU allocator
// to pool bytes in the kernel, nil when pool is 0 (no ceiling) or the
// kernel's environment sets either switch itself: the user's choice wins.
// TensorFlow reads them when it makes its first CPU device, so they must
// be there when the kernel starts.
func tensorPoolEnv(pool uint64) []string {
	if pool < 1<<20 {
		return nil
	}
	for _, v := range tensorPoolVars {
		if _, set := os.LookupEnv(v); set {
			return nil
		}
	}
	return []string{tensorPoolVars[0] + "=true", fmt.Sprintf("%s=%d", tensorPoolVars[1], pool>>20)}
}
