package supervisor

import (
	"slices"
	"testing"
)

func TestTensorPoolEnv(t *testing.T) {
	want := []string{"TF_CPU_ALLOCATOR_USE_BFC=true", "TF_CPU_BFC_MEM_LIMIT_IN_MB=1229"}
	if got := tensorPoolEnv(1229 << 20); !slices.Equal(got, want) {
		t.Errorf("tensorPoolEnv(1229 MiB) = %q, want %q", got, want)
	}
	if got := tensorPoolEnv(0); got != nil {
		t.Errorf("without a ceiling: %q, want nothing", got)
	}
	for _, v := range tensorPoolVars {
		t.Run("the user's "+v, func(t *testing.T) {
			t.Setenv(v, "0")
			if got := tensorPoolEnv(1229 << 20); got != nil {
				t.Errorf("with %s set by the user: %q, want nothing", v, got)
			}
		})
	}
}
